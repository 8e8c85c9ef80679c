/* tx8c C runtime: element types, byte layouts, DMA, NoC reductions and the instruction
 * runner (see tx8c_rt.h). */
#include "tx8c_rt.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -- errors ------------------------------------------------------------------------- */

static int32_t ctx_group = -1, ctx_tile = -1, ctx_instr = -1;
static const char *ctx_what = "";

void tx_set_context(int32_t group, int32_t tile, int32_t instr, const char *what) {
    ctx_group = group;
    ctx_tile = tile;
    ctx_instr = instr;
    ctx_what = what ? what : "";
}

void tx_fail(const char *fmt, ...) {
    va_list args;
    fprintf(stderr, "tx8c runtime error: group %d, tile %d, instruction %d (%s): ",
            (int)ctx_group, (int)ctx_tile, (int)ctx_instr, ctx_what);
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
    exit(3);
}

void *tx_alloc(size_t count, size_t size) {
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) tx_fail("out of host memory (%zu x %zu bytes)", count, size);
    return p;
}

/* -- element types ------------------------------------------------------------------ */

int32_t tx_itemsize(int32_t format) {
    switch (format) {
    case TX_F32: case TX_TF32: case TX_I32: return 4;
    case TX_F16: case TX_BF16: case TX_I16: return 2;
    case TX_F64: case TX_I64: return 8;
    case TX_I8: case TX_U8: case TX_BOOL: return 1;
    default: tx_fail("unknown element type %d", (int)format); return 0;
    }
}

int tx_is_float(int32_t format) {
    return format == TX_F32 || format == TX_TF32 || format == TX_F16 || format == TX_BF16 ||
           format == TX_F64;
}

/* A binary float format of `mant` explicit mantissa bits and `expo` exponent bits: the
 * nearest value, ties to even (numpy's and ml_dtypes' conversions), with subnormals. */
static uint16_t round_to_small_float(double v, int mant, int expo) {
    uint16_t sign = signbit(v) ? (uint16_t)(1u << (mant + expo)) : 0;
    int bias = (1 << (expo - 1)) - 1;
    uint16_t inf = (uint16_t)(((1u << expo) - 1) << mant);
    if (isnan(v)) return (uint16_t)(sign | inf | (1u << (mant - 1)));
    double a = fabs(v);
    if (isinf(a)) return (uint16_t)(sign | inf);
    if (a == 0.0) return sign;
    int e;
    frexp(a, &e); /* a = f * 2^e, f in [0.5, 1) */
    int emin = 1 - bias;
    int ulp = e - 1 - mant;
    if (ulp < emin - mant) ulp = emin - mant;
    double r = nearbyint(ldexp(a, -ulp)); /* the current mode: to nearest, ties to even */
    double val = ldexp(r, ulp);
    if (val >= ldexp(1.0, bias + 1)) return (uint16_t)(sign | inf);
    if (val < ldexp(1.0, emin)) return (uint16_t)(sign | (uint16_t)r);
    int e2;
    double f2 = frexp(val, &e2);
    uint16_t field = (uint16_t)(e2 - 1 + bias);
    uint16_t m = (uint16_t)ldexp(f2 * 2.0 - 1.0, mant);
    return (uint16_t)(sign | (uint16_t)(field << mant) | m);
}

static double small_float_value(uint16_t h, int mant, int expo) {
    int bias = (1 << (expo - 1)) - 1;
    int field = (h >> mant) & ((1 << expo) - 1);
    int m = h & ((1 << mant) - 1);
    double s = (h >> (mant + expo)) & 1 ? -1.0 : 1.0;
    if (field == (1 << expo) - 1) return m ? NAN : s * INFINITY;
    if (field == 0) return s * ldexp((double)m, 1 - bias - mant);
    return s * ldexp((double)(m | (1 << mant)), field - bias - mant);
}

double tx_f16_to_f64(uint16_t h) { return small_float_value(h, 10, 5); }
uint16_t tx_f64_to_f16(double v) { return round_to_small_float(v, 10, 5); }
double tx_bf16_to_f64(uint16_t h) { return small_float_value(h, 7, 8); }
uint16_t tx_f64_to_bf16(double v) { return round_to_small_float(v, 7, 8); }

/* -- layouts (tx8c/target/mem_layout.py) ------------------------------------------- */

int64_t tx_volume(const int32_t *shape, int32_t rank) {
    int64_t v = 1;
    for (int32_t d = 0; d < rank; d++) v *= shape[d];
    return v;
}

void tx_next_index(int64_t *idx, const int32_t *shape, int32_t rank) {
    for (int32_t d = rank - 1; d >= 0; d--) {
        if (++idx[d] < shape[d]) return;
        idx[d] = 0;
    }
}

static int is_int8_rule(int32_t f) { return f == TX_I8 || f == TX_U8; }
static int is_float_rule(int32_t f) {
    return f == TX_F32 || f == TX_TF32 || f == TX_F16 || f == TX_BF16;
}

void tx_plan(TxPlan *p, const int32_t *shape, int32_t rank, int32_t format, int32_t layout,
             const TxConfig *cfg) {
    memset(p, 0, sizeof *p);
    if (rank > MAX_SHAPE_DIM) tx_fail("rank %d above MAX_SHAPE_DIM", (int)rank);
    p->rank = rank;
    p->layout = layout;
    for (int32_t d = 0; d < rank; d++) p->shape[d] = shape[d];
    int batched = layout == TX_NTENSOR || layout == TX_NCX;
    if (rank == 0) {
        p->n = p->hw = p->c = 1;
    } else if (rank == 1) {
        p->n = 1, p->hw = 1, p->c = shape[0];
    } else if (batched) {
        p->n = shape[0], p->hw = tx_volume(shape + 1, rank - 2), p->c = shape[rank - 1];
    } else {
        p->n = 1, p->hw = tx_volume(shape, rank - 1), p->c = shape[rank - 1];
    }
    p->itemsize = tx_itemsize(format);
    p->aligned = (layout == TX_CX || layout == TX_NCX) &&
                 (is_float_rule(format) || is_int8_rule(format));
    if (p->aligned) {
        int int8 = is_int8_rule(format);
        p->block = int8 ? cfg->channel_block_int8 : cfg->channel_block_float;
        p->cx = p->c / p->block;
        p->c0 = p->c - p->cx * p->block;
        const int32_t *steps = int8 ? cfg->pad_steps_int8 : cfg->pad_steps_float;
        int32_t nsteps = int8 ? cfg->n_pad_steps_int8 : cfg->n_pad_steps_float;
        p->c0p = 0;
        if (p->c0) {
            p->c0p = p->block;
            for (int32_t i = 0; i < nsteps; i++)
                if (steps[i] >= p->c0) { p->c0p = steps[i]; break; }
        }
    } else {
        p->block = p->cx = 0;
        p->c0 = p->c0p = p->c;
    }
    int64_t batch_bytes = (p->cx * p->hw * p->block + p->hw * p->c0p) * p->itemsize;
    int64_t align = cfg->batch_align_bytes;
    p->stride = p->aligned ? (batch_bytes + align - 1) / align * align : batch_bytes;
    p->total = p->n > 0 ? (p->n - 1) * p->stride + batch_bytes : 0;
}

int64_t tx_plan_address(const TxPlan *p, int64_t n, int64_t hw, int64_t c) {
    int64_t bc = p->cx * p->block, off;
    if (c < bc)
        off = (c / p->block) * p->hw * p->block + hw * p->block + c % p->block;
    else
        off = p->cx * p->hw * p->block + hw * p->c0p + (c - bc);
    return n * p->stride + off * p->itemsize;
}

int64_t tx_element_address(const TxPlan *p, const int64_t *index) {
    if (p->rank == 0) return 0;
    if (p->rank == 1) return tx_plan_address(p, 0, 0, index[0]);
    int batched = p->layout == TX_NTENSOR || p->layout == TX_NCX;
    int32_t first = batched ? 1 : 0;
    int64_t hw = 0;
    for (int32_t d = first; d < p->rank - 1; d++) hw = hw * p->shape[d] + index[d];
    return tx_plan_address(p, batched ? index[0] : 0, hw, index[p->rank - 1]);
}

/* -- memory ------------------------------------------------------------------------- */

uint8_t *tx_base(TxMachine *m, int32_t tile, const TSR *t, int64_t bytes) {
    uint8_t *mem;
    uint64_t size;
    if (t->space == TX_DDR) {
        mem = m->ddr, size = m->ddr_bytes;
    } else {
        if (tile < 0 || tile >= m->tiles) tx_fail("tile %d does not exist", (int)tile);
        mem = m->spm[tile], size = m->spm_bytes;
    }
    if (bytes < 0 || t->addr > size || (uint64_t)bytes > size - t->addr)
        tx_fail("%s access [%llu, %llu) is outside its %llu bytes",
                t->space == TX_DDR ? "DDR" : "SPM", (unsigned long long)t->addr,
                (unsigned long long)(t->addr + (uint64_t)bytes), (unsigned long long)size);
    return mem + t->addr;
}

/* the layout plan of an SPM buffer: the window it holds (`shape_real`) */
static void window_plan(TxMachine *m, const TSR *t, TxPlan *p) {
    tx_plan(p, t->shape.shape_real, t->shape.dim, t->format, t->layout, &m->config);
}

static uint64_t load_bits(const uint8_t *p, int64_t size) {
    uint64_t v = 0;
    memcpy(&v, p, (size_t)size); /* little-endian host */
    return v;
}

static void store_bits(uint8_t *p, uint64_t v, int64_t size) { memcpy(p, &v, (size_t)size); }

static double bits_to_f64(uint64_t b, int32_t f) {
    switch (f) {
    case TX_F32: case TX_TF32: { float x; uint32_t u = (uint32_t)b; memcpy(&x, &u, 4); return x; }
    case TX_F64: { double x; memcpy(&x, &b, 8); return x; }
    case TX_F16: return tx_f16_to_f64((uint16_t)b);
    case TX_BF16: return tx_bf16_to_f64((uint16_t)b);
    case TX_I8: return (double)(int8_t)b;
    case TX_U8: return (double)(uint8_t)b;
    case TX_I16: return (double)(int16_t)b;
    case TX_I32: return (double)(int32_t)b;
    case TX_I64: return (double)(int64_t)b;
    case TX_BOOL: return b ? 1.0 : 0.0;
    default: tx_fail("unknown element type %d", (int)f); return 0;
    }
}

static int64_t bits_to_i64(uint64_t b, int32_t f) {
    switch (f) {
    case TX_I8: return (int8_t)b;
    case TX_U8: return (uint8_t)b;
    case TX_I16: return (int16_t)b;
    case TX_I32: return (int32_t)b;
    case TX_I64: return (int64_t)b;
    case TX_BOOL: return b != 0;
    default: return (int64_t)bits_to_f64(b, f);
    }
}

static uint64_t f64_to_bits(double v, int32_t f, int f64) {
    if (!f64 && f != TX_F64 && tx_is_float(f)) v = (float)v; /* fp32 result first */
    switch (f) {
    case TX_F32: case TX_TF32: { float x = (float)v; uint32_t u; memcpy(&u, &x, 4); return u; }
    case TX_F64: { uint64_t u; memcpy(&u, &v, 8); return u; }
    case TX_F16: return tx_f64_to_f16(v);
    case TX_BF16: return tx_f64_to_bf16(v);
    case TX_BOOL: return v != 0.0;
    default: return (uint64_t)(int64_t)v;
    }
}

static uint64_t i64_to_bits(int64_t v, int32_t f) {
    if (tx_is_float(f)) return f64_to_bits((double)v, f, 1);
    if (f == TX_BOOL) return v != 0;
    return (uint64_t)v; /* two's complement: the low bytes are the narrow value */
}

/* The byte address (from the TSR's memory start) of every element of its window, in
 * row-major order; `*n` gets their count, `*item` the element size. */
static uint8_t *element_addresses(TxMachine *m, int32_t tile, const TSR *t, int64_t **addr,
                                  int64_t *n, int64_t *item) {
    const L_SHAPE *s = &t->shape;
    TxPlan p;
    int whole = t->space == TX_DDR;
    if (whole) tx_plan(&p, s->shape_whole, s->dim, t->format, t->layout, &m->config);
    else window_plan(m, t, &p);
    uint8_t *base = tx_base(m, tile, t, p.total);
    *n = tx_volume(s->shape_slice, s->dim);
    *item = p.itemsize;
    *addr = tx_alloc((size_t)*n, sizeof(int64_t));
    /* where the window starts in the memory's tensor: the whole one in DDR, the
     * buffer's window in SPM */
    int64_t idx[MAX_SHAPE_DIM] = {0}, at[MAX_SHAPE_DIM] = {0}, from[MAX_SHAPE_DIM] = {0};
    for (int32_t k = 0; k < s->dim; k++) {
        from[k] = whole ? s->shape_start[k] : s->shape_start[k] - s->shape_origin[k];
        int32_t size = whole ? s->shape_whole[k] : s->shape_real[k];
        if (from[k] < 0 || from[k] + s->shape_slice[k] > size)
            tx_fail("window dim %d [%d, +%d) is outside the %s's [%d, +%d)", (int)k,
                    (int)s->shape_start[k], (int)s->shape_slice[k], whole ? "tensor" : "buffer",
                    whole ? 0 : (int)s->shape_origin[k], (int)size);
    }
    for (int64_t e = 0; e < *n; e++) {
        for (int32_t k = 0; k < s->dim; k++) at[k] = idx[k] + from[k];
        (*addr)[e] = tx_element_address(&p, at);
        tx_next_index(idx, s->shape_slice, s->dim);
    }
    return base;
}

#define FOR_EACH_ELEMENT(m, tile, t, base, i, a, item, body)                        \
    do {                                                                             \
        int64_t *addrs_, count_, item;                                               \
        uint8_t *base = element_addresses(m, tile, t, &addrs_, &count_, &item);      \
        for (int64_t i = 0; i < count_; i++) {                                       \
            int64_t a = addrs_[i];                                                   \
            body;                                                                    \
        }                                                                            \
        free(addrs_);                                                                \
    } while (0)

double *tx_read_f64(TxMachine *m, int32_t tile, const TSR *t) {
    double *out = tx_alloc((size_t)tx_volume(t->shape.shape_slice, t->shape.dim), sizeof(double));
    FOR_EACH_ELEMENT(m, tile, t, base, i, a, item,
                     out[i] = bits_to_f64(load_bits(base + a, item), t->format));
    return out;
}

int64_t *tx_read_i64(TxMachine *m, int32_t tile, const TSR *t) {
    int64_t *out = tx_alloc((size_t)tx_volume(t->shape.shape_slice, t->shape.dim), sizeof(int64_t));
    FOR_EACH_ELEMENT(m, tile, t, base, i, a, item,
                     out[i] = bits_to_i64(load_bits(base + a, item), t->format));
    return out;
}

uint64_t *tx_read_raw(TxMachine *m, int32_t tile, const TSR *t) {
    uint64_t *out = tx_alloc((size_t)tx_volume(t->shape.shape_slice, t->shape.dim),
                             sizeof(uint64_t));
    FOR_EACH_ELEMENT(m, tile, t, base, i, a, item, out[i] = load_bits(base + a, item));
    return out;
}

static double combine_f64(int32_t combine, double old, double v) {
    switch (combine) {
    case TX_COMBINE_SUM: return old + v;
    case TX_COMBINE_MAX: return (isnan(old) || old > v) ? old : v;
    case TX_COMBINE_MIN: return (isnan(old) || old < v) ? old : v;
    case TX_COMBINE_PROD: return old * v;
    default: return v;
    }
}

static int64_t combine_i64(int32_t combine, int64_t old, int64_t v) {
    switch (combine) {
    case TX_COMBINE_SUM: return (int64_t)((uint64_t)old + (uint64_t)v);
    case TX_COMBINE_MAX: return old > v ? old : v;
    case TX_COMBINE_MIN: return old < v ? old : v;
    case TX_COMBINE_PROD: return (int64_t)((uint64_t)old * (uint64_t)v);
    default: return v;
    }
}

void tx_write_f64(TxMachine *m, int32_t tile, const TSR *t, const double *v, int f64,
                  int32_t combine) {
    int wide = f64 || t->format == TX_F64;
    FOR_EACH_ELEMENT(m, tile, t, base, i, a, item, {
        double x = v[i];
        if (combine != TX_COMBINE_NONE) {
            double old = bits_to_f64(load_bits(base + a, item), t->format);
            if (!wide) x = (float)x;
            x = combine_f64(combine, old, x);
        }
        store_bits(base + a, f64_to_bits(x, t->format, wide), item);
    });
}

void tx_write_i64(TxMachine *m, int32_t tile, const TSR *t, const int64_t *v,
                  int32_t combine) {
    FOR_EACH_ELEMENT(m, tile, t, base, i, a, item, {
        int64_t x = v[i];
        if (combine != TX_COMBINE_NONE)
            x = combine_i64(combine, bits_to_i64(load_bits(base + a, item), t->format), x);
        store_bits(base + a, i64_to_bits(x, t->format), item);
    });
}

void tx_write_raw(TxMachine *m, int32_t tile, const TSR *t, const uint64_t *v) {
    FOR_EACH_ELEMENT(m, tile, t, base, i, a, item, store_bits(base + a, v[i], item));
}

/* -- numpy's pairwise summation (numpy/_core/src/umath/loops_utils.h.src) ------------ */

float tx_pairwise_sum_f32(const float *a, int64_t n, int64_t stride) {
    if (n < 8) {
        float res = -0.0f;
        for (int64_t i = 0; i < n; i++) res += a[i * stride];
        return res;
    }
    if (n <= 128) {
        float r[8];
        int64_t i;
        for (int j = 0; j < 8; j++) r[j] = a[j * stride];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++) r[j] += a[(i + j) * stride];
        float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i * stride];
        return res;
    }
    int64_t n2 = n / 2;
    n2 -= n2 % 8;
    return tx_pairwise_sum_f32(a, n2, stride) + tx_pairwise_sum_f32(a + n2 * stride, n - n2,
                                                                    stride);
}

/* -- DMA and NoC ------------------------------------------------------------------------ */

/* Copy `size` bytes between `spm` and the bytes [at, at + size) of the resident tensor of
 * `d` (its pages spread over the tiles' SPM). */
static void resident_copy(TxMachine *m, const TxDma *d, int64_t at, uint8_t *spm,
                          int64_t size) {
    for (int64_t b = 0; b < size; b++) {
        uint64_t page = (uint64_t)(at + b) / d->page, within = (uint64_t)(at + b) % d->page;
        int32_t owner = (int32_t)(page % (uint64_t)m->tiles);
        uint64_t addr = d->ddr.addr + page / (uint64_t)m->tiles * d->page + within;
        if (addr >= m->spm_bytes)
            tx_fail("DMA of '%s': resident byte %lld is at %llu, outside the SPM", d->tensor,
                    (long long)(at + b), (unsigned long long)addr);
        if (d->store) m->spm[owner][addr] = spm[b];
        else spm[b] = m->spm[owner][addr];
    }
}

void tx_dma(TxMachine *m, int32_t tile, const TxDma *d, G_SHAPE *g) {
    const L_SHAPE *w = &d->ddr.shape, *b = &d->spm.shape;
    TxPlan whole, buf;
    tx_plan(&whole, w->shape_whole, w->dim, d->ddr.format, d->ddr.layout, &m->config);
    window_plan(m, &d->spm, &buf);
    if (b->dim != w->dim || d->spm.format != d->ddr.format)
        tx_fail("DMA of '%s': the SPM buffer's rank or element type differs from DDR's",
                d->tensor);
    for (int32_t k = 0; k < w->dim; k++) {
        if (w->shape_start[k] < 0 || w->shape_slice[k] < 0 ||
            w->shape_start[k] + w->shape_slice[k] > w->shape_whole[k])
            tx_fail("DMA of '%s': window dim %d [%d, %d) is outside the tensor's %d", d->tensor,
                    (int)k, (int)w->shape_start[k], (int)(w->shape_start[k] + w->shape_slice[k]),
                    (int)w->shape_whole[k]);
        if (b->shape_start[k] < 0 || b->shape_start[k] + w->shape_slice[k] > b->shape_real[k])
            tx_fail("DMA of '%s': dim %d moves %d elements at %d of a buffer of %d", d->tensor,
                    (int)k, (int)w->shape_slice[k], (int)b->shape_start[k],
                    (int)b->shape_real[k]);
    }
    int resident = d->ddr.space == TX_RESIDENT;
    uint8_t *ddr = resident ? NULL : tx_base(m, tile, &d->ddr, whole.total);
    uint8_t *spm = tx_base(m, tile, &d->spm, buf.total);
    int64_t count = tx_volume(w->shape_slice, w->dim);
    int64_t idx[MAX_SHAPE_DIM] = {0}, at[MAX_SHAPE_DIM] = {0}, in[MAX_SHAPE_DIM] = {0};
    for (int64_t e = 0; e < count; e++) {
        for (int32_t k = 0; k < w->dim; k++) {
            at[k] = w->shape_start[k] + idx[k];
            in[k] = b->shape_start[k] + idx[k];
        }
        int64_t offset = tx_element_address(&whole, at);
        uint8_t *s = spm + tx_element_address(&buf, in);
        if (resident) {
            resident_copy(m, d, offset, s, whole.itemsize);
            tx_next_index(idx, w->shape_slice, w->dim);
            continue;
        }
        uint8_t *a = ddr + offset;
        if (d->store) memcpy(a, s, (size_t)whole.itemsize);
        else memcpy(s, a, (size_t)whole.itemsize);
        tx_next_index(idx, w->shape_slice, w->dim);
    }
    if (g) {
        memset(g, 0, sizeof *g);
        g->dim = w->dim;
        for (int32_t k = 0; k < w->dim; k++) {
            g->spatial_start[k] = w->shape_start[k];
            g->spatial_end[k] = w->shape_start[k] + w->shape_slice[k];
            g->shape[k] = w->shape_whole[k];
        }
        g->done = 1;
    }
}

void tx_noc_reduce(TxMachine *m, int32_t tile, const TxNoc *r) {
    if (tx_volume(r->source.shape.shape_slice, r->source.shape.dim) !=
        tx_volume(r->target.shape.shape_slice, r->target.shape.dim))
        tx_fail("NoC reduction: source and target hold different element counts");
    if (tx_is_float(r->target.format)) {
        double *v = tx_read_f64(m, r->source_tile, &r->source);
        tx_write_f64(m, tile, &r->target, v, r->target.format == TX_F64, r->combine);
        free(v);
    } else {
        int64_t *v = tx_read_i64(m, r->source_tile, &r->source);
        tx_write_i64(m, tile, &r->target, v, r->combine);
        free(v);
    }
}

/* -- the instruction runner ---------------------------------------------------------- */

static void run_one(TxMachine *m, int32_t group, int32_t tile, const TxInstr *in, int32_t i) {
    G_SHAPE g;
    switch (in->kind) {
    case TX_I_DMA:
        tx_set_context(group, tile, i, in->dma->tensor);
        tx_dma(m, tile, in->dma, &g);
        break;
    case TX_I_KERNEL:
        tx_set_context(group, tile, i, in->kernel->op);
        in->kernel->fn(in->kernel, m, tile);
        break;
    case TX_I_NOC:
        tx_set_context(group, tile, i, in->noc->combine == TX_COMBINE_NONE
                                           ? "NoC multicast copy" : "NoC reduction");
        tx_noc_reduce(m, tile, in->noc);
        break;
    default:
        tx_fail("unknown instruction kind %d", (int)in->kind);
    }
}

void tx_run(TxMachine *m, int32_t group, int32_t tile, const TxInstr *code, int32_t n) {
    for (int32_t i = 0; i < n; i++) run_one(m, group, tile, &code[i], i);
}

static int32_t slot_of(int32_t n_tiles, const int32_t *tiles, int32_t tile) {
    for (int32_t s = 0; s < n_tiles; s++)
        if (tiles[s] == tile) return s;
    return -1;
}

/* May tile slot `s` run its next instruction? Not a NoC reduction whose source has not
 * completed the partial; not past an instruction whose partial a reduction still has to
 * read. */
static int may_run(int32_t n_tiles, const int32_t *tiles, const TxInstr *const *code,
                   const int32_t *counts, const int32_t *pc, int32_t s) {
    const TxInstr *in = &code[s][pc[s]];
    if (in->kind == TX_I_NOC) {
        int32_t src = slot_of(n_tiles, tiles, in->noc->source_tile);
        if (src < 0) tx_fail("NoC transfer from tile %d, which has no work in this group",
                             (int)in->noc->source_tile);
        if (pc[src] <= in->noc->after) return 0;
    }
    for (int32_t o = 0; o < n_tiles; o++)
        for (int32_t j = pc[o]; j < counts[o]; j++) {
            const TxInstr *r = &code[o][j];
            if (r->kind == TX_I_NOC && r->noc->source_tile == tiles[s] && r->noc->after < pc[s])
                return 0;
        }
    return 1;
}

void tx_run_group(TxMachine *m, int32_t group, int32_t n_tiles, const int32_t *tiles,
                  const TxInstr *const *code, const int32_t *counts) {
    int32_t *pc = tx_alloc((size_t)n_tiles, sizeof(int32_t));
    for (;;) {
        int progress = 0, done = 1;
        for (int32_t s = 0; s < n_tiles; s++) {
            while (pc[s] < counts[s] && may_run(n_tiles, tiles, code, counts, pc, s)) {
                run_one(m, group, tiles[s], &code[s][pc[s]], pc[s]);
                pc[s]++;
                progress = 1;
            }
            if (pc[s] < counts[s]) done = 0;
        }
        if (done) break;
        if (!progress) {
            tx_set_context(group, -1, -1, "NoC reductions");
            tx_fail("the tiles' NoC reductions wait on each other (a deadlock)");
        }
    }
    free(pc);
}
