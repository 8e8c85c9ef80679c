/* tx8c C runtime: one reference kernel per op family. Each computes one slice exactly as
 * the op's `compute_slice` in Python does (tx8c/dialect/ops/); the integer and float
 * params (k->ip, k->fp) are those the op's `gen_op_code` gives, in the order listed in
 * each kernel's comment. Operands and results are the windows their TSRs describe. */
#include "tx8c_rt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* -- helpers -------------------------------------------------------------------------- */

static const int32_t *dims(const TSR *t) { return t->shape.shape_slice; }
static int32_t rank(const TSR *t) { return t->shape.dim; }
static int64_t count(const TSR *t) { return tx_volume(dims(t), rank(t)); }

static void need_params(const TxKernel *k, int32_t nip, int32_t nfp) {
    if (k->nip < nip || k->nfp < nfp)
        tx_fail("kernel needs %d int and %d float params, got %d and %d", (int)nip, (int)nfp,
                (int)k->nip, (int)k->nfp);
}

/* an f64 op computes in double; every other float op in fp32 (numpy's upcast) */
static int computes_f64(const TxKernel *k) {
    for (int32_t i = 0; i < k->n_in; i++)
        if (k->in[i].format == TX_F64) return 1;
    return 0;
}

static double f32(double v) { return (float)v; }

/* Row-major strides of `t`'s window aligned to an output of rank `r` under numpy
 * broadcasting: 0 along the dims `t` broadcasts. */
static void broadcast_strides(const TSR *t, const int32_t *out, int32_t r, int64_t *strides) {
    int32_t tr = rank(t), off = r - tr;
    int64_t s = 1;
    for (int32_t d = r - 1; d >= 0; d--) {
        int32_t td = d - off;
        if (td < 0) { strides[d] = 0; continue; }
        int32_t n = dims(t)[td];
        if (n != out[d] && n != 1)
            tx_fail("operand dim %d (%d) does not broadcast to %d", (int)td, (int)n, (int)out[d]);
        strides[d] = n == 1 ? 0 : s;
        s *= n;
    }
}

/* flat offsets into up to 3 broadcast operands for every output element (row-major) */
static int64_t *broadcast_offsets(const TSR *t, const int32_t *out, int32_t r) {
    int64_t strides[MAX_SHAPE_DIM], idx[MAX_SHAPE_DIM] = {0};
    broadcast_strides(t, out, r, strides);
    int64_t n = tx_volume(out, r), off = 0;
    int64_t *offs = tx_alloc((size_t)n, sizeof(int64_t));
    for (int64_t e = 0; e < n; e++) {
        offs[e] = off;
        for (int32_t d = r - 1; d >= 0; d--) {
            off += strides[d];
            if (++idx[d] < out[d]) break;
            off -= strides[d] * idx[d];
            idx[d] = 0;
        }
    }
    return offs;
}

static void same_count(const TxKernel *k, const TSR *a, const TSR *b) {
    if (count(a) != count(b))
        tx_fail("%s: %lld elements in, %lld out", k->op, (long long)count(a),
                (long long)count(b));
}

/* -- data movement (raw element bits, any type) ---------------------------------------- */

/* Reshape, ChannelNorm, identities: the window's elements in row-major order. */
void op_copy(const TxKernel *k, TxMachine *m, int32_t tile) {
    same_count(k, &k->in[0], &k->out[0]);
    uint64_t *v = tx_read_raw(m, tile, &k->in[0]);
    tx_write_raw(m, tile, &k->out[0], v);
    free(v);
}

/* BroadCast: the input window broadcast to the output window. */
void op_broadcast(const TxKernel *k, TxMachine *m, int32_t tile) {
    const TSR *o = &k->out[0];
    uint64_t *x = tx_read_raw(m, tile, &k->in[0]);
    int64_t *offs = broadcast_offsets(&k->in[0], dims(o), rank(o));
    int64_t n = count(o);
    uint64_t *y = tx_alloc((size_t)n, sizeof(uint64_t));
    for (int64_t e = 0; e < n; e++) y[e] = x[offs[e]];
    tx_write_raw(m, tile, o, y);
    free(x), free(offs), free(y);
}

/* Transpose. ip: perm[rank] (result dim i is input dim perm[i]). */
void op_transpose(const TxKernel *k, TxMachine *m, int32_t tile) {
    const TSR *x = &k->in[0], *o = &k->out[0];
    int32_t r = rank(x);
    need_params(k, r, 0);
    int64_t in_strides[MAX_SHAPE_DIM], s = 1, idx[MAX_SHAPE_DIM] = {0};
    for (int32_t d = r - 1; d >= 0; d--) in_strides[d] = s, s *= dims(x)[d];
    uint64_t *v = tx_read_raw(m, tile, x);
    int64_t n = count(o);
    uint64_t *y = tx_alloc((size_t)n, sizeof(uint64_t));
    for (int64_t e = 0; e < n; e++) {
        int64_t off = 0;
        for (int32_t d = 0; d < r; d++) off += idx[d] * in_strides[k->ip[d]];
        y[e] = v[off];
        tx_next_index(idx, dims(o), r);
    }
    tx_write_raw(m, tile, o, y);
    free(v), free(y);
}

/* Slice. ip: step[rank]: result index j of a dim reads window index j * step, counted
 * from the window's end for a negative step. */
void op_slice(const TxKernel *k, TxMachine *m, int32_t tile) {
    const TSR *x = &k->in[0], *o = &k->out[0];
    int32_t r = rank(x);
    need_params(k, r, 0);
    int64_t st[MAX_SHAPE_DIM], s = 1, idx[MAX_SHAPE_DIM] = {0};
    for (int32_t d = r - 1; d >= 0; d--) st[d] = s, s *= dims(x)[d];
    uint64_t *v = tx_read_raw(m, tile, x);
    int64_t n = count(o);
    uint64_t *y = tx_alloc((size_t)n, sizeof(uint64_t));
    for (int64_t e = 0; e < n; e++) {
        int64_t off = 0;
        for (int32_t d = 0; d < r; d++) {
            int64_t step = k->ip[d], j = idx[d] * (step > 0 ? step : -step);
            off += (step > 0 ? j : dims(x)[d] - 1 - j) * st[d];
        }
        y[e] = v[off];
        tx_next_index(idx, dims(o), r);
    }
    tx_write_raw(m, tile, o, y);
    free(v), free(y);
}

/* Copy `src` (shape sdims) into `dst` (shape ddims) at offset `at` along `axis`. */
static void place_along(uint64_t *dst, const int32_t *ddims, const uint64_t *src,
                        const int32_t *sdims, int32_t r, int32_t axis, int64_t at, int dir) {
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < axis; d++) outer *= sdims[d];
    for (int32_t d = axis + 1; d < r; d++) inner *= sdims[d];
    int64_t sl = sdims[axis], dl = ddims[axis];
    for (int64_t a = 0; a < outer; a++)
        for (int64_t b = 0; b < sl; b++) {
            uint64_t *big = dst + (a * dl + at + b) * inner;
            const uint64_t *small = src + (a * sl + b) * inner;
            if (dir) memcpy(big, small, (size_t)inner * sizeof(uint64_t));
            else memcpy((uint64_t *)small, big, (size_t)inner * sizeof(uint64_t));
        }
}

/* Concatenate. ip: axis. The operand windows joined along axis (some may be empty). */
void op_concat(const TxKernel *k, TxMachine *m, int32_t tile) {
    need_params(k, 1, 0);
    const TSR *o = &k->out[0];
    int32_t axis = (int32_t)k->ip[0];
    uint64_t *y = tx_alloc((size_t)count(o), sizeof(uint64_t));
    int64_t at = 0;
    for (int32_t i = 0; i < k->n_in; i++) {
        if (count(&k->in[i]) == 0) continue;
        uint64_t *v = tx_read_raw(m, tile, &k->in[i]);
        place_along(y, dims(o), v, dims(&k->in[i]), rank(o), axis, at, 1);
        at += dims(&k->in[i])[axis];
        free(v);
    }
    if (at != dims(o)[axis]) tx_fail("concatenated %lld of %d rows", (long long)at, dims(o)[axis]);
    tx_write_raw(m, tile, o, y);
    free(y);
}

/* Split. ip: axis, then per result the start of its piece in the window along axis
 * (-1: the slice produces nothing of that result). */
void op_split(const TxKernel *k, TxMachine *m, int32_t tile) {
    need_params(k, 1 + k->n_out, 0);
    int32_t axis = (int32_t)k->ip[0];
    uint64_t *v = tx_read_raw(m, tile, &k->in[0]);
    for (int32_t r = 0; r < k->n_out; r++) {
        if (k->ip[1 + r] < 0 || !k->out_used[r]) continue;
        const TSR *o = &k->out[r];
        uint64_t *y = tx_alloc((size_t)count(o), sizeof(uint64_t));
        if (k->ip[1 + r] + dims(o)[axis] > dims(&k->in[0])[axis])
            tx_fail("split piece %d runs past the window", (int)r);
        place_along(v, dims(&k->in[0]), y, dims(o), rank(o), axis, k->ip[1 + r], 0);
        tx_write_raw(m, tile, o, y);
        free(y);
    }
    free(v);
}

/* Gather. ip: axis. data window (the indexed dim whole) and integer indices; negative
 * indices count from the end. */
void op_gather(const TxKernel *k, TxMachine *m, int32_t tile) {
    need_params(k, 1, 0);
    const TSR *data = &k->in[0], *ind = &k->in[1], *o = &k->out[0];
    int32_t axis = (int32_t)k->ip[0];
    int64_t outer = 1, inner = 1, dim = dims(data)[axis];
    for (int32_t d = 0; d < axis; d++) outer *= dims(data)[d];
    for (int32_t d = axis + 1; d < rank(data); d++) inner *= dims(data)[d];
    uint64_t *v = tx_read_raw(m, tile, data);
    int64_t *ix = tx_read_i64(m, tile, ind);
    int64_t ni = count(ind);
    if (outer * ni * inner != count(o)) tx_fail("gather result has %lld elements, expected %lld",
                                                (long long)count(o), (long long)(outer * ni * inner));
    uint64_t *y = tx_alloc((size_t)count(o), sizeof(uint64_t));
    for (int64_t a = 0; a < outer; a++)
        for (int64_t j = 0; j < ni; j++) {
            int64_t i = ix[j] < 0 ? ix[j] + dim : ix[j];
            if (i < 0 || i >= dim) tx_fail("index %lld out of range for %lld", (long long)ix[j],
                                           (long long)dim);
            memcpy(y + (a * ni + j) * inner, v + (a * dim + i) * inner,
                   (size_t)inner * sizeof(uint64_t));
        }
    tx_write_raw(m, tile, o, y);
    free(v), free(ix), free(y);
}

/* -- element-wise ---------------------------------------------------------------------- */

static double binary_float(int64_t op, double a, double b, int wide) {
    switch (op) {
    case TX_ADD: return a + b;
    case TX_SUB: return a - b;
    case TX_MUL: return a * b;
    case TX_DIV: return a / b;
    case TX_MAX: return isnan(a) || a > b ? a : b;
    case TX_MIN: return isnan(a) || a < b ? a : b;
    case TX_POW: return wide ? pow(a, b) : powf((float)a, (float)b);
    case TX_FMOD: return wide ? fmod(a, b) : fmodf((float)a, (float)b);
    case TX_EQUAL: return a == b;
    case TX_LESS: return a < b;
    case TX_LESS_EQUAL: return a <= b;
    case TX_GREATER: return a > b;
    case TX_GREATER_EQUAL: return a >= b;
    case TX_AND: return a != 0 && b != 0;
    case TX_OR: return a != 0 || b != 0;
    default: tx_fail("binary op %d has no float form", (int)op); return 0;
    }
}

static int64_t binary_int(int64_t op, int64_t a, int64_t b) {
    switch (op) {
    case TX_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case TX_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
    case TX_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case TX_DIV: return b == 0 ? 0 : a / b; /* truncates toward zero, as _int_div */
    case TX_MAX: return a > b ? a : b;
    case TX_MIN: return a < b ? a : b;
    case TX_POW: return (int64_t)pow((double)a, (double)b);
    case TX_MOD: { if (b == 0) return 0; int64_t r = a % b; return r && ((r < 0) != (b < 0)) ? r + b : r; }
    case TX_FMOD: return b == 0 ? 0 : a % b;
    case TX_EQUAL: return a == b;
    case TX_LESS: return a < b;
    case TX_LESS_EQUAL: return a <= b;
    case TX_GREATER: return a > b;
    case TX_GREATER_EQUAL: return a >= b;
    case TX_AND: return a && b;
    case TX_OR: return a || b;
    default: tx_fail("binary op %d has no integer form", (int)op); return 0;
    }
}

/* Binary ops with numpy broadcasting. ip: op code (TX_ADD...). */
void op_binary(const TxKernel *k, TxMachine *m, int32_t tile) {
    need_params(k, 1, 0);
    const TSR *o = &k->out[0];
    int64_t n = count(o);
    int64_t *oa = broadcast_offsets(&k->in[0], dims(o), rank(o));
    int64_t *ob = broadcast_offsets(&k->in[1], dims(o), rank(o));
    if (tx_is_float(k->in[0].format) || tx_is_float(k->in[1].format)) {
        int wide = computes_f64(k);
        double *a = tx_read_f64(m, tile, &k->in[0]), *b = tx_read_f64(m, tile, &k->in[1]);
        double *y = tx_alloc((size_t)n, sizeof(double));
        for (int64_t e = 0; e < n; e++) y[e] = binary_float(k->ip[0], a[oa[e]], b[ob[e]], wide);
        tx_write_f64(m, tile, o, y, wide, k->combine);
        free(a), free(b), free(y);
    } else {
        int64_t *a = tx_read_i64(m, tile, &k->in[0]), *b = tx_read_i64(m, tile, &k->in[1]);
        int64_t *y = tx_alloc((size_t)n, sizeof(int64_t));
        for (int64_t e = 0; e < n; e++) y[e] = binary_int(k->ip[0], a[oa[e]], b[ob[e]]);
        tx_write_i64(m, tile, o, y, k->combine);
        free(a), free(b), free(y);
    }
    free(oa), free(ob);
}

/* Where: condition ? x : y, all three broadcast. */
void op_where(const TxKernel *k, TxMachine *m, int32_t tile) {
    const TSR *o = &k->out[0];
    int64_t n = count(o);
    int64_t *oc = broadcast_offsets(&k->in[0], dims(o), rank(o));
    int64_t *ox = broadcast_offsets(&k->in[1], dims(o), rank(o));
    int64_t *oy = broadcast_offsets(&k->in[2], dims(o), rank(o));
    int64_t *c = tx_read_i64(m, tile, &k->in[0]);
    uint64_t *x = tx_read_raw(m, tile, &k->in[1]), *y = tx_read_raw(m, tile, &k->in[2]);
    uint64_t *r = tx_alloc((size_t)n, sizeof(uint64_t));
    for (int64_t e = 0; e < n; e++) r[e] = c[oc[e]] ? x[ox[e]] : y[oy[e]];
    tx_write_raw(m, tile, o, r);
    free(oc), free(ox), free(oy), free(c), free(x), free(y), free(r);
}

static double unary_f32(const TxKernel *k, double xd) {
    float x = (float)xd;
    switch (k->ip[0]) {
    case TX_RELU: return x > 0.0f ? x : (isnan(x) ? x : 0.0f);
    case TX_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case TX_TANH: return tanhf(x);
    case TX_ERF: return (float)erf((double)x);
    case TX_EXP: return expf(x);
    case TX_LOG: return logf(x);
    case TX_SQRT: return sqrtf(x);
    case TX_RSQRT: return 1.0f / sqrtf(x);
    case TX_RECIPROCAL: return 1.0f / x;
    case TX_ABS: return fabsf(x);
    case TX_NEG: return -x;
    case TX_SIN: return sinf(x);
    case TX_COS: return cosf(x);
    case TX_FLOOR: return floorf(x);
    case TX_CEIL: return ceilf(x);
    case TX_ROUND: return nearbyintf(x);
    case TX_ATAN: return atanf(x);
    case TX_LEAKY_RELU: return x >= 0.0f ? x : x * (float)k->fp[0];
    case TX_HARD_SIGMOID: {
        float v = (float)k->fp[0] * x + (float)k->fp[1];
        return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
    }
    case TX_CLIP: {
        float lo = (float)k->fp[0], hi = (float)k->fp[1];
        if (k->ip[1] && !isnan(x) && !(x >= lo)) x = lo;
        if (k->ip[2] && !isnan(x) && !(x <= hi)) x = hi;
        return x;
    }
    default: tx_fail("unary op %d has no fp32 form", (int)k->ip[0]); return 0;
    }
}

static double unary_f64(const TxKernel *k, double x) {
    switch (k->ip[0]) {
    case TX_RELU: return x > 0.0 ? x : (isnan(x) ? x : 0.0);
    case TX_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case TX_TANH: return tanh(x);
    case TX_ERF: return erf(x);
    case TX_EXP: return exp(x);
    case TX_LOG: return log(x);
    case TX_SQRT: return sqrt(x);
    case TX_RSQRT: return 1.0 / sqrt(x);
    case TX_RECIPROCAL: return 1.0 / x;
    case TX_ABS: return fabs(x);
    case TX_NEG: return -x;
    case TX_SIN: return sin(x);
    case TX_COS: return cos(x);
    case TX_FLOOR: return floor(x);
    case TX_CEIL: return ceil(x);
    case TX_ROUND: return nearbyint(x);
    case TX_ATAN: return atan(x);
    case TX_LEAKY_RELU: return x >= 0.0 ? x : x * k->fp[0];
    case TX_HARD_SIGMOID: {
        double v = k->fp[0] * x + k->fp[1];
        return v < 0.0 ? 0.0 : (v > 1.0 ? 1.0 : v);
    }
    case TX_CLIP:
        if (k->ip[1] && !isnan(x) && !(x >= k->fp[0])) x = k->fp[0];
        if (k->ip[2] && !isnan(x) && !(x <= k->fp[1])) x = k->fp[1];
        return x;
    default: tx_fail("unary op %d has no f64 form", (int)k->ip[0]); return 0;
    }
}

static int64_t unary_int(const TxKernel *k, int64_t x) {
    switch (k->ip[0]) {
    case TX_RELU: return x > 0 ? x : 0;
    case TX_ABS: return x < 0 ? -x : x;
    case TX_NEG: return -x;
    case TX_NOT: return !x;
    case TX_CLIP:
        if (k->ip[1] && x < (int64_t)k->fp[0]) x = (int64_t)k->fp[0];
        if (k->ip[2] && x > (int64_t)k->fp[1]) x = (int64_t)k->fp[1];
        return x;
    default: tx_fail("unary op %d has no integer form", (int)k->ip[0]); return 0;
    }
}

/* Unary ops. ip: op code (TX_RELU...), then for Clip whether min and max are given;
 * fp: alpha, beta (LeakyRelu, HardSigmoid) or min, max (Clip). */
void op_unary(const TxKernel *k, TxMachine *m, int32_t tile) {
    need_params(k, 1, 0);
    const TSR *x = &k->in[0], *o = &k->out[0];
    same_count(k, x, o);
    int64_t n = count(o);
    if (tx_is_float(x->format)) {
        int wide = computes_f64(k);
        double *v = tx_read_f64(m, tile, x);
        for (int64_t e = 0; e < n; e++) v[e] = wide ? unary_f64(k, v[e]) : unary_f32(k, v[e]);
        tx_write_f64(m, tile, o, v, wide, k->combine);
        free(v);
    } else {
        int64_t *v = tx_read_i64(m, tile, x);
        for (int64_t e = 0; e < n; e++) v[e] = unary_int(k, v[e]);
        tx_write_i64(m, tile, o, v, k->combine);
        free(v);
    }
}

/* Cast: floats to integers truncate toward zero; to bool: nonzero. */
void op_cast(const TxKernel *k, TxMachine *m, int32_t tile) {
    const TSR *x = &k->in[0], *o = &k->out[0];
    same_count(k, x, o);
    int64_t n = count(o);
    if (tx_is_float(x->format) && !tx_is_float(o->format) && o->format != TX_BOOL) {
        double *v = tx_read_f64(m, tile, x);
        int64_t *y = tx_alloc((size_t)n, sizeof(int64_t));
        for (int64_t e = 0; e < n; e++) y[e] = (int64_t)trunc(v[e]);
        tx_write_i64(m, tile, o, y, TX_COMBINE_NONE);
        free(v), free(y);
    } else if (tx_is_float(x->format) || tx_is_float(o->format)) {
        double *v = tx_read_f64(m, tile, x);
        tx_write_f64(m, tile, o, v, 1, TX_COMBINE_NONE); /* one rounding, as astype */
        free(v);
    } else {
        int64_t *v = tx_read_i64(m, tile, x);
        tx_write_i64(m, tile, o, v, TX_COMBINE_NONE);
        free(v);
    }
}

/* -- NE: Gemm and Conv (double accumulation, one rounding: exact_matmul) --------------- */

/* Gemm, and MatMulInteger (integer operands: an exact sum that wraps like the int32
 * accumulator, no alpha or bias). ip: trans_a, trans_b, bias (the slice adds the bias:
 * first K piece); fp: alpha, beta. a [..., M, K] (or K, M), b [..., K, N] (or N, K), batch dims
 * broadcast like numpy matmul; the bias broadcasts to the result window. */
void op_gemm(const TxKernel *k, TxMachine *m, int32_t tile) {
    need_params(k, 3, 2);
    const TSR *A = &k->in[0], *B = &k->in[1], *o = &k->out[0];
    int32_t r = rank(o), ra = rank(A), rb = rank(B);
    int ta = (int)k->ip[0], tb = (int)k->ip[1], use_bias = (int)k->ip[2] && k->n_in > 2;
    int64_t M = dims(o)[r - 2], N = dims(o)[r - 1];
    int64_t K = ta ? dims(A)[ra - 2] : dims(A)[ra - 1];
    if ((tb ? dims(B)[rb - 1] : dims(B)[rb - 2]) != K) tx_fail("Gemm: K of a and b differ");
    /* batch offsets of a and b per output batch (broadcast over the batch dims) */
    int32_t batch_dims[MAX_SHAPE_DIM];
    for (int32_t d = 0; d < r - 2; d++) batch_dims[d] = dims(o)[d];
    int64_t nb = tx_volume(batch_dims, r - 2);
    TSR ab = *A, bb = *B; /* the batch dims alone */
    ab.shape.dim = ra - 2, bb.shape.dim = rb - 2;
    int64_t *boa = broadcast_offsets(&ab, batch_dims, r - 2);
    int64_t *bob = broadcast_offsets(&bb, batch_dims, r - 2);
    double *a = tx_read_f64(m, tile, A), *b = tx_read_f64(m, tile, B);
    double *bias = use_bias ? tx_read_f64(m, tile, &k->in[2]) : NULL;
    int64_t *obias = use_bias ? broadcast_offsets(&k->in[2], dims(o), r) : NULL;
    double *y = tx_alloc((size_t)count(o), sizeof(double));
    int integer = !tx_is_float(A->format);
    int64_t *yi = integer ? tx_alloc((size_t)count(o), sizeof(int64_t)) : NULL;
    float alpha = (float)k->fp[0], beta = (float)k->fp[1];
    for (int64_t p = 0; p < nb; p++) {
        const double *pa = a + boa[p] * M * K, *pb = b + bob[p] * K * N;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double acc = 0.0;
                uint64_t iacc = 0;
                for (int64_t q = 0; q < K; q++) {
                    double av = ta ? pa[q * M + i] : pa[i * K + q];
                    double bv = tb ? pb[j * K + q] : pb[q * N + j];
                    if (integer) iacc += (uint64_t)((int64_t)av * (int64_t)bv);
                    else acc += av * bv;
                }
                int64_t e = (p * M + i) * N + j;
                if (integer) {
                    yi[e] = (int64_t)iacc;
                    continue;
                }
                float v = (float)acc;
                if (k->fp[0] != 1.0) v = v * alpha;
                if (use_bias) v = v + beta * (float)bias[obias[e]];
                y[e] = v;
            }
    }
    if (integer) tx_write_i64(m, tile, o, yi, k->combine);
    else tx_write_f64(m, tile, o, y, 0, k->combine);
    free(boa), free(bob), free(a), free(b), free(bias), free(obias), free(y), free(yi);
}

/* Conv (2-D), and ConvInteger (integer operands: an exact sum that wraps like the int32
 * accumulator, no bias). ip: nhwc, hwoi, stride h, w, dilation h, w, groups (in this slice), pad
 * top, left, bottom, right (the slice's border rows), bias (first input-channel piece).
 * The input window, the weight window, the bias window [C_out of the slice]. */
void op_conv(const TxKernel *k, TxMachine *m, int32_t tile) {
    need_params(k, 12, 0);
    const TSR *X = &k->in[0], *W = &k->in[1], *o = &k->out[0];
    int nhwc = (int)k->ip[0], hwoi = (int)k->ip[1];
    int64_t sh = k->ip[2], sw = k->ip[3], dh = k->ip[4], dw = k->ip[5], groups = k->ip[6];
    int64_t top = k->ip[7], left = k->ip[8];
    int use_bias = (int)k->ip[11] && k->n_in > 2;
    const int32_t *xs = dims(X), *ws = dims(W), *os = dims(o);
    int64_t n = xs[0], cin = nhwc ? xs[3] : xs[1], h = nhwc ? xs[1] : xs[2],
            w = nhwc ? xs[2] : xs[3];
    int64_t cout = hwoi ? ws[2] : ws[0], cpg = hwoi ? ws[3] : ws[1], kh = hwoi ? ws[0] : ws[2],
            kw = hwoi ? ws[1] : ws[3];
    int64_t oh = nhwc ? os[1] : os[2], ow = nhwc ? os[2] : os[3];
    if ((nhwc ? os[3] : os[1]) != cout || cpg * groups != cin || cout % groups)
        tx_fail("Conv: channels do not match (in %lld, weight %lldx%lld, groups %lld)",
                (long long)cin, (long long)cout, (long long)cpg, (long long)groups);
    double *x = tx_read_f64(m, tile, X), *wt = tx_read_f64(m, tile, W);
    double *bias = use_bias ? tx_read_f64(m, tile, &k->in[2]) : NULL;
    double *y = tx_alloc((size_t)count(o), sizeof(double));
    int integer = !tx_is_float(X->format);
    int64_t *yi = integer ? tx_alloc((size_t)count(o), sizeof(int64_t)) : NULL;
    int64_t opg = cout / groups;
    for (int64_t b = 0; b < n; b++)
        for (int64_t co = 0; co < cout; co++) {
            int64_t g = co / opg;
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    double acc = 0.0;
                    uint64_t iacc = 0;
                    for (int64_t ci = 0; ci < cpg; ci++)
                        for (int64_t u = 0; u < kh; u++) {
                            int64_t yy = i * sh + u * dh - top;
                            if (yy < 0 || yy >= h) continue;
                            for (int64_t v = 0; v < kw; v++) {
                                int64_t xx = j * sw + v * dw - left;
                                if (xx < 0 || xx >= w) continue;
                                int64_t c = g * cpg + ci;
                                double xv = nhwc ? x[((b * h + yy) * w + xx) * cin + c]
                                                 : x[((b * cin + c) * h + yy) * w + xx];
                                double wv = hwoi ? wt[((u * kw + v) * cout + co) * cpg + ci]
                                                 : wt[((co * cpg + ci) * kh + u) * kw + v];
                                if (integer) iacc += (uint64_t)((int64_t)xv * (int64_t)wv);
                                else acc += xv * wv;
                            }
                        }
                    float r = (float)acc;
                    if (use_bias) r = r + (float)bias[co];
                    int64_t e = nhwc ? ((b * oh + i) * ow + j) * cout + co
                                     : ((b * cout + co) * oh + i) * ow + j;
                    y[e] = r;
                    if (integer) yi[e] = (int64_t)iacc;
                }
        }
    if (integer) tx_write_i64(m, tile, o, yi, k->combine);
    else tx_write_f64(m, tile, o, y, 0, k->combine);
    free(x), free(wt), free(bias), free(y), free(yi);
}

/* -- pooling and reductions ------------------------------------------------------------ */

/* Pool. ip: mode (TX_R_MAX / TX_R_MEAN), channels_last, global, n spatial dims,
 * count_include_pad, kernel[n], strides[n], dilations[n], pads[2n] (begins then ends:
 * the slice's border rows). The input window, the output window. */
void op_pool(const TxKernel *k, TxMachine *m, int32_t tile) {
    need_params(k, 5, 0);
    int64_t mode = k->ip[0], last = k->ip[1], global = k->ip[2], ns = k->ip[3];
    int64_t include_pad = k->ip[4];
    need_params(k, (int32_t)(5 + 5 * ns), 0);
    const int64_t *ker = k->ip + 5, *str = ker + ns, *dil = str + ns, *pad = dil + ns;
    const TSR *X = &k->in[0], *o = &k->out[0];
    int32_t r = rank(X);
    const int32_t *xs = dims(X), *os = dims(o);
    int64_t nb = xs[0], ch = last ? xs[r - 1] : xs[1];
    int64_t in_sp[MAX_SHAPE_DIM], out_sp[MAX_SHAPE_DIM];
    for (int64_t s = 0; s < ns; s++) {
        in_sp[s] = xs[(last ? 1 : 2) + s];
        out_sp[s] = os[(last ? 1 : 2) + s];
    }
    int64_t in_pix = 1, out_pix = 1, taps = 1;
    for (int64_t s = 0; s < ns; s++) {
        in_pix *= in_sp[s], out_pix *= out_sp[s];
        taps *= global ? in_sp[s] : ker[s];
    }
    double *x = tx_read_f64(m, tile, X);
    double *y = tx_alloc((size_t)count(o), sizeof(double));
    int wide = computes_f64(k);
    for (int64_t b = 0; b < nb; b++)
        for (int64_t c = 0; c < ch; c++)
            for (int64_t q = 0; q < out_pix; q++) {
                int64_t oi[MAX_SHAPE_DIM], rem = q;
                for (int64_t s = ns - 1; s >= 0; s--) oi[s] = rem % out_sp[s], rem /= out_sp[s];
                double best = -INFINITY, sum = 0.0, counted = 0.0;
                int nan = 0;
                for (int64_t t = 0; t < taps; t++) {
                    int64_t ti[MAX_SHAPE_DIM], tr = t, flat = 0, real = 1, declared = 1;
                    for (int64_t s = ns - 1; s >= 0; s--) {
                        int64_t kk = global ? in_sp[s] : ker[s];
                        ti[s] = tr % kk, tr /= kk;
                    }
                    for (int64_t s = 0; s < ns; s++) {
                        int64_t p = global ? ti[s] : oi[s] * str[s] + ti[s] * dil[s] - pad[s];
                        if (p < 0 || p >= in_sp[s]) real = 0;
                        if (!global && (p < -pad[s] || p >= in_sp[s] + pad[ns + s])) declared = 0;
                        flat = flat * in_sp[s] + p;
                    }
                    if (real) {
                        double v = last ? x[(b * in_pix + flat) * ch + c]
                                        : x[(b * ch + c) * in_pix + flat];
                        if (isnan(v)) nan = 1;
                        if (v > best) best = v;
                        sum += v;
                    } else if (mode == TX_R_MAX && declared) {
                        if (best < -INFINITY) best = -INFINITY;
                    }
                    if (real || (include_pad && declared)) counted += 1.0;
                }
                double res;
                if (mode == TX_R_MAX) res = nan ? NAN : best;
                else if (global) res = wide ? sum / (double)taps : f32(sum / (double)taps);
                else res = wide ? sum / counted : f32(f32(sum) / f32(counted));
                int64_t e = last ? (b * out_pix + q) * ch + c : (b * ch + c) * out_pix + q;
                y[e] = res;
            }
    tx_write_f64(m, tile, o, y, wide, k->combine);
    free(x), free(y);
}

/* The reduction geometry of a window: the reduced dims (mask) of x. `outer` positions
 * (row-major over the kept dims) each reduce `len` elements; elems[o*len + i] is the
 * flat offset of element i of position o, in numpy's summation order: pairwise over a
 * contiguous trailing block, else row-major over the reduced dims. */
typedef struct { int64_t outer, len; int64_t *elems; int pairwise; } Rows;

static Rows reduction_rows(const int32_t *shape, int32_t r, const int *reduced) {
    Rows rows = {1, 1, NULL, 0};
    int32_t kept[MAX_SHAPE_DIM], red[MAX_SHAPE_DIM], nk = 0, nr = 0;
    int64_t strides[MAX_SHAPE_DIM], s = 1;
    for (int32_t d = r - 1; d >= 0; d--) strides[d] = s, s *= shape[d];
    for (int32_t d = 0; d < r; d++) {
        if (reduced[d]) red[nr++] = d, rows.len *= shape[d];
        else kept[nk++] = d, rows.outer *= shape[d];
    }
    /* numpy sums pairwise when the reduced dims (ignoring dims of size 1) are the
     * trailing ones: they coalesce into one contiguous inner loop */
    rows.pairwise = 1;
    for (int32_t d = 0; d < r; d++)
        if (reduced[d] && shape[d] != 1)
            for (int32_t e = d + 1; e < r; e++)
                if (!reduced[e] && shape[e] != 1) rows.pairwise = 0;
    rows.elems = tx_alloc((size_t)(rows.outer * rows.len), sizeof(int64_t));
    for (int64_t o = 0; o < rows.outer; o++) {
        int64_t base = 0, rem = o;
        for (int32_t i = nk - 1; i >= 0; i--) {
            base += (rem % shape[kept[i]]) * strides[kept[i]];
            rem /= shape[kept[i]];
        }
        for (int64_t i = 0; i < rows.len; i++) {
            int64_t off = base, rr = i;
            for (int32_t j = nr - 1; j >= 0; j--) {
                off += (rr % shape[red[j]]) * strides[red[j]];
                rr /= shape[red[j]];
            }
            rows.elems[o * rows.len + i] = off;
        }
    }
    return rows;
}

/* numpy's float32 sum of one row (identity 0, then pairwise or in order) */
static float sum_row_f32(const Rows *rows, int64_t o, const float *v) {
    const int64_t *el = rows->elems + o * rows->len;
    if (rows->pairwise) {
        float *buf = tx_alloc((size_t)rows->len, sizeof(float));
        for (int64_t i = 0; i < rows->len; i++) buf[i] = v[el[i]];
        float s = 0.0f + tx_pairwise_sum_f32(buf, rows->len, 1);
        free(buf);
        return s;
    }
    float s = 0.0f;
    for (int64_t i = 0; i < rows->len; i++) s += v[el[i]];
    return s;
}

/* Reduce. ip: mode (TX_R_SUM...), then a 0/1 per input dim (reduced); fp: the factor a
 * mean's partial sum is scaled by (piece / whole, 1 for a whole reduction). Output:
 * one value per kept position (keepdims or not: the same row-major order). */
void op_reduce(const TxKernel *k, TxMachine *m, int32_t tile) {
    const TSR *X = &k->in[0], *o = &k->out[0];
    int32_t r = rank(X);
    need_params(k, 1 + r, 1);
    int reduced[MAX_SHAPE_DIM];
    for (int32_t d = 0; d < r; d++) reduced[d] = (int)k->ip[1 + d];
    Rows rows = reduction_rows(dims(X), r, reduced);
    if (rows.outer != count(o)) tx_fail("Reduce: %lld positions, result has %lld",
                                        (long long)rows.outer, (long long)count(o));
    int64_t mode = k->ip[0];
    if (tx_is_float(X->format) && X->format != TX_F64) {
        double *xd = tx_read_f64(m, tile, X);
        int64_t n = count(X);
        float *v = tx_alloc((size_t)n, sizeof(float));
        for (int64_t i = 0; i < n; i++) v[i] = (float)xd[i];
        double *y = tx_alloc((size_t)rows.outer, sizeof(double));
        for (int64_t q = 0; q < rows.outer; q++) {
            const int64_t *el = rows.elems + q * rows.len;
            float acc;
            if (mode == TX_R_SUM || mode == TX_R_MEAN) {
                acc = sum_row_f32(&rows, q, v);
                if (mode == TX_R_MEAN) acc = (float)((double)acc / (double)rows.len);
            } else if (mode == TX_R_PROD) {
                acc = 1.0f;
                for (int64_t i = 0; i < rows.len; i++) acc *= v[el[i]];
            } else {
                acc = mode == TX_R_MAX ? -INFINITY : INFINITY;
                for (int64_t i = 0; i < rows.len; i++) {
                    float e = v[el[i]];
                    if (isnan(acc)) break;
                    if (isnan(e) || (mode == TX_R_MAX ? e > acc : e < acc)) acc = e;
                }
            }
            if (mode == TX_R_MEAN && k->fp[0] != 1.0) acc = acc * (float)k->fp[0];
            y[q] = acc;
        }
        tx_write_f64(m, tile, o, y, 0, k->combine);
        free(xd), free(v), free(y);
    } else if (X->format == TX_F64) {
        double *v = tx_read_f64(m, tile, X);
        double *y = tx_alloc((size_t)rows.outer, sizeof(double));
        for (int64_t q = 0; q < rows.outer; q++) {
            const int64_t *el = rows.elems + q * rows.len;
            double acc = mode == TX_R_PROD ? 1.0 : mode == TX_R_MAX ? -INFINITY
                         : mode == TX_R_MIN ? INFINITY : 0.0;
            for (int64_t i = 0; i < rows.len; i++) {
                double e = v[el[i]];
                if (mode == TX_R_SUM || mode == TX_R_MEAN) acc += e;
                else if (mode == TX_R_PROD) acc *= e;
                else if (!isnan(acc) && (isnan(e) || (mode == TX_R_MAX ? e > acc : e < acc)))
                    acc = e;
            }
            if (mode == TX_R_MEAN) acc = acc / (double)rows.len * k->fp[0];
            y[q] = acc;
        }
        tx_write_f64(m, tile, o, y, 1, k->combine);
        free(v), free(y);
    } else {
        int64_t *v = tx_read_i64(m, tile, X);
        int64_t *y = tx_alloc((size_t)rows.outer, sizeof(int64_t));
        for (int64_t q = 0; q < rows.outer; q++) {
            const int64_t *el = rows.elems + q * rows.len;
            uint64_t acc = mode == TX_R_PROD ? 1u : 0u;
            int64_t best = v[el[0]];
            for (int64_t i = 0; i < rows.len; i++) {
                int64_t e = v[el[i]];
                if (mode == TX_R_SUM) acc += (uint64_t)e;
                else if (mode == TX_R_PROD) acc *= (uint64_t)e;
                else if (mode == TX_R_MAX ? e > best : e < best) best = e;
            }
            y[q] = (mode == TX_R_SUM || mode == TX_R_PROD) ? (int64_t)acc : best;
        }
        tx_write_i64(m, tile, o, y, k->combine);
        free(v), free(y);
    }
    free(rows.elems);
}

/* -- normalisations (fp32 step by step, as numpy computes them) ------------------------ */

static float *read_f32(TxMachine *m, int32_t tile, const TSR *t) {
    double *d = tx_read_f64(m, tile, t);
    int64_t n = count(t);
    float *v = tx_alloc((size_t)n, sizeof(float));
    for (int64_t i = 0; i < n; i++) v[i] = (float)d[i];
    free(d);
    return v;
}

static void write_f32(TxMachine *m, int32_t tile, const TxKernel *k, const float *v) {
    int64_t n = count(&k->out[0]);
    double *d = tx_alloc((size_t)n, sizeof(double));
    for (int64_t i = 0; i < n; i++) d[i] = v[i];
    tx_write_f64(m, tile, &k->out[0], d, 0, k->combine);
    free(d);
}

static Rows trailing_rows(const TSR *x, int32_t from) {
    int reduced[MAX_SHAPE_DIM];
    for (int32_t d = 0; d < rank(x); d++) reduced[d] = d >= from;
    return reduction_rows(dims(x), rank(x), reduced);
}

/* Softmax. ip: axis. exp(x - max) / sum, in fp32. */
void op_softmax(const TxKernel *k, TxMachine *m, int32_t tile) {
    need_params(k, 1, 0);
    const TSR *X = &k->in[0];
    int reduced[MAX_SHAPE_DIM];
    for (int32_t d = 0; d < rank(X); d++) reduced[d] = d == k->ip[0];
    Rows rows = reduction_rows(dims(X), rank(X), reduced);
    float *v = read_f32(m, tile, X);
    float *e = tx_alloc((size_t)count(X), sizeof(float));
    for (int64_t q = 0; q < rows.outer; q++) {
        const int64_t *el = rows.elems + q * rows.len;
        float mx = -INFINITY;
        for (int64_t i = 0; i < rows.len; i++)
            if (isnan(mx) || isnan(v[el[i]]) || v[el[i]] > mx) mx = isnan(mx) ? mx : v[el[i]];
        for (int64_t i = 0; i < rows.len; i++) e[el[i]] = expf(v[el[i]] - mx);
        float s = sum_row_f32(&rows, q, e);
        for (int64_t i = 0; i < rows.len; i++) v[el[i]] = e[el[i]] / s;
    }
    write_f32(m, tile, k, v);
    free(rows.elems), free(v), free(e);
}

/* numpy's float32 mean of each row: pairwise (or ordered) sum / count */
static float row_mean(const Rows *rows, int64_t q, const float *v) {
    return (float)((double)sum_row_f32(rows, q, v) / (double)rows->len);
}

/* apply the affine operands (broadcast to x) to `out`: out * scale, + bias */
static void affine(const TxKernel *k, TxMachine *m, int32_t tile, float *out, int32_t first,
                   int32_t n_affine) {
    const TSR *X = &k->in[0];
    for (int32_t a = 0; a < n_affine; a++) {
        float *p = read_f32(m, tile, &k->in[first + a]);
        int64_t *off = broadcast_offsets(&k->in[first + a], dims(X), rank(X));
        for (int64_t i = 0; i < count(X); i++)
            out[i] = a == 0 ? out[i] * p[off[i]] : out[i] + p[off[i]];
        free(p), free(off);
    }
}

/* LayerNorm. ip: axis (first normalised dim), number of affine operands (scale, bias);
 * fp: epsilon. */
void op_layernorm(const TxKernel *k, TxMachine *m, int32_t tile) {
    need_params(k, 2, 1);
    const TSR *X = &k->in[0];
    Rows rows = trailing_rows(X, (int32_t)k->ip[0]);
    float *v = read_f32(m, tile, X);
    float *sq = tx_alloc((size_t)count(X), sizeof(float));
    float eps = (float)k->fp[0];
    for (int64_t q = 0; q < rows.outer; q++) {
        const int64_t *el = rows.elems + q * rows.len;
        float mean = row_mean(&rows, q, v);
        for (int64_t i = 0; i < rows.len; i++) {
            v[el[i]] = v[el[i]] - mean;
            sq[el[i]] = v[el[i]] * v[el[i]];
        }
        float var = row_mean(&rows, q, sq);
        float den = sqrtf(var + eps);
        for (int64_t i = 0; i < rows.len; i++) v[el[i]] = v[el[i]] / den;
    }
    affine(k, m, tile, v, 1, (int32_t)k->ip[1]);
    write_f32(m, tile, k, v);
    free(rows.elems), free(v), free(sq);
}

/* RMSNorm. ip: axis, number of affine operands (scale); fp: epsilon. */
void op_rmsnorm(const TxKernel *k, TxMachine *m, int32_t tile) {
    need_params(k, 2, 1);
    const TSR *X = &k->in[0];
    Rows rows = trailing_rows(X, (int32_t)k->ip[0]);
    float *v = read_f32(m, tile, X);
    float *sq = tx_alloc((size_t)count(X), sizeof(float));
    for (int64_t i = 0; i < count(X); i++) sq[i] = v[i] * v[i];
    for (int64_t q = 0; q < rows.outer; q++) {
        const int64_t *el = rows.elems + q * rows.len;
        float den = sqrtf(row_mean(&rows, q, sq) + (float)k->fp[0]);
        for (int64_t i = 0; i < rows.len; i++) v[el[i]] = v[el[i]] / den;
    }
    affine(k, m, tile, v, 1, (int32_t)k->ip[1]);
    write_f32(m, tile, k, v);
    free(rows.elems), free(v), free(sq);
}

/* BatchNorm_Inference. ip: channel axis; fp: epsilon. Operands: x, scale, offset, mean,
 * variance (windows of the slice's channels). */
void op_batchnorm(const TxKernel *k, TxMachine *m, int32_t tile) {
    need_params(k, 1, 1);
    const TSR *X = &k->in[0];
    int32_t axis = (int32_t)k->ip[0], r = rank(X);
    float *v = read_f32(m, tile, X);
    float *p[4];
    for (int i = 0; i < 4; i++) p[i] = read_f32(m, tile, &k->in[1 + i]);
    int64_t inner = 1, ch = dims(X)[axis];
    for (int32_t d = axis + 1; d < r; d++) inner *= dims(X)[d];
    float eps = (float)k->fp[0];
    for (int64_t i = 0; i < count(X); i++) {
        int64_t c = (i / inner) % ch;
        float inv_std = 1.0f / sqrtf(p[3][c] + eps);
        v[i] = (v[i] - p[2][c]) * (inv_std * p[0][c]) + p[1][c];
    }
    write_f32(m, tile, k, v);
    free(v);
    for (int i = 0; i < 4; i++) free(p[i]);
}

/* -- indexed movement: Tile, Pad, GatherElements, ScatterND, TopK, Resize -------------- */

static void row_major_strides(const int32_t *shape, int32_t r, int64_t *strides) {
    int64_t s = 1;
    for (int32_t d = r - 1; d >= 0; d--) strides[d] = s, s *= shape[d];
}


/* `i`, an index into dim d of `t`'s window counted from the whole operand's start, as an
 * index into the window (an index outside it stops the run) */
static int64_t window_index(const TxKernel *k, const TSR *t, int32_t d, int64_t i) {
    int64_t local = i - t->shape.shape_start[d];
    if (local < 0 || local >= dims(t)[d])
        tx_fail("%s: index %lld of dim %d is outside the operand window [%d, +%d)", k->op,
                (long long)i, (int)d, (int)t->shape.shape_start[d], (int)dims(t)[d]);
    return local;
}

/* Tile. ip: repeats[rank]. A dim repeated more than once is read whole and result index
 * g (counted from the result's start) reads g mod its size; the other dims follow the
 * result. */
void op_tile(const TxKernel *k, TxMachine *m, int32_t tile) {
    const TSR *x = &k->in[0], *o = &k->out[0];
    int32_t r = rank(o);
    need_params(k, r, 0);
    int64_t st[MAX_SHAPE_DIM], idx[MAX_SHAPE_DIM] = {0};
    row_major_strides(dims(x), r, st);
    int64_t n = count(o);
    uint64_t *v = n ? tx_read_raw(m, tile, x) : NULL;
    uint64_t *y = tx_alloc((size_t)n, sizeof(uint64_t));
    for (int64_t e = 0; e < n; e++) {
        int64_t off = 0;
        for (int32_t d = 0; d < r; d++)
            off += (k->ip[d] == 1 ? idx[d] : (o->shape.shape_start[d] + idx[d]) % dims(x)[d])
                   * st[d];
        y[e] = v[off];
        tx_next_index(idx, dims(o), r);
    }
    tx_write_raw(m, tile, o, y);
    free(v), free(y);
}

/* Pad. ip: mode (TX_PAD_...), the fill value's element bits (constant), begins[rank].
 * Result index g of a dim (counted from the result's start) reads input index
 * g - begin, brought into [0, n) by the mode (n: the whole input dim): reflect mirrors
 * without repeating the edge, edge clamps, wrap is periodic; constant writes the fill
 * there instead. The input window holds what the slice reads. */
void op_pad(const TxKernel *k, TxMachine *m, int32_t tile) {
    const TSR *x = &k->in[0], *o = &k->out[0];
    int32_t r = rank(o);
    need_params(k, 2 + r, 0);
    int64_t mode = k->ip[0], st[MAX_SHAPE_DIM], idx[MAX_SHAPE_DIM] = {0};
    row_major_strides(dims(x), r, st);
    int64_t n = count(o);
    uint64_t *v = count(x) ? tx_read_raw(m, tile, x) : NULL;
    uint64_t *y = tx_alloc((size_t)n, sizeof(uint64_t));
    for (int64_t e = 0; e < n; e++) {
        int64_t off = 0;
        int fill = 0;
        for (int32_t d = 0; d < r && !fill; d++) {
            int64_t i = o->shape.shape_start[d] + idx[d] - k->ip[2 + d];
            int64_t size = x->shape.shape_whole[d];
            if (mode == TX_PAD_CONSTANT) fill = i < 0 || i >= size;
            else if (mode == TX_PAD_REFLECT) i = i < 0 ? -i : (i >= size ? 2 * (size - 1) - i : i);
            else if (mode == TX_PAD_EDGE) i = i < 0 ? 0 : (i >= size ? size - 1 : i);
            else if (mode == TX_PAD_WRAP) i = ((i % size) + size) % size;
            else tx_fail("Pad: unknown mode %d", (int)mode);
            if (!fill) off += window_index(k, x, d, i) * st[d];
        }
        y[e] = fill ? (uint64_t)k->ip[1] : v[off];
        tx_next_index(idx, dims(o), r);
    }
    tx_write_raw(m, tile, o, y);
    free(v), free(y);
}

/* `i` wrapped into [0, size) like a negative ONNX index; outside [-size, size) stops */
static int64_t wrapped_index(const TxKernel *k, int64_t i, int64_t size) {
    if (i < -size || i >= size)
        tx_fail("%s: index %lld is out of range for a dim of %lld", k->op, (long long)i,
                (long long)size);
    return i < 0 ? i + size : i;
}

/* GatherElements. ip: axis. result[l] = data[l with dim axis replaced by indices[l]]
 * (negative indices count from the end); data is read whole along axis, its other dims
 * follow the result. */
void op_gather_elements(const TxKernel *k, TxMachine *m, int32_t tile) {
    need_params(k, 1, 0);
    const TSR *data = &k->in[0], *ind = &k->in[1], *o = &k->out[0];
    int32_t r = rank(o), axis = (int32_t)k->ip[0];
    same_count(k, ind, o);
    int64_t st[MAX_SHAPE_DIM], idx[MAX_SHAPE_DIM] = {0}, n = count(o);
    row_major_strides(dims(data), r, st);
    uint64_t *v = n ? tx_read_raw(m, tile, data) : NULL;
    int64_t *ix = tx_read_i64(m, tile, ind);
    uint64_t *y = tx_alloc((size_t)n, sizeof(uint64_t));
    for (int64_t e = 0; e < n; e++) {
        int64_t off = 0;
        for (int32_t d = 0; d < r; d++)
            off += (d == axis ? wrapped_index(k, ix[e], dims(data)[axis]) : idx[d]) * st[d];
        y[e] = v[off];
        tx_next_index(idx, dims(o), r);
    }
    tx_write_raw(m, tile, o, y);
    free(v), free(ix), free(y);
}

static double scatter_f64(int64_t op, double a, double b) {
    switch (op) {
    case TX_SCATTER_ADD: return a + b;
    case TX_SCATTER_MUL: return a * b;
    case TX_SCATTER_MAX: return isnan(a) ? a : (isnan(b) ? b : (a >= b ? a : b));
    default: return isnan(a) ? a : (isnan(b) ? b : (a <= b ? a : b));
    }
}

static float scatter_f32(int64_t op, float a, float b) {
    switch (op) {
    case TX_SCATTER_ADD: return a + b;
    case TX_SCATTER_MUL: return a * b;
    default: return (float)scatter_f64(op, a, b);
    }
}

static int64_t scatter_i64(int64_t op, int64_t a, int64_t b) {
    switch (op) {
    case TX_SCATTER_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case TX_SCATTER_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case TX_SCATTER_MAX: return a > b ? a : b;
    default: return a < b ? a : b;
    }
}

/* ScatterND. ip: depth q (the last dim of indices), reduction (TX_SCATTER_...). The data
 * window (its first q dims whole), all the indices, the updates window (its trailing
 * dims follow the data's). A copy of data in which each indexed slice is replaced by
 * its update, or combined with it, one update after another (f16/bf16 in fp32). */
void op_scatter_nd(const TxKernel *k, TxMachine *m, int32_t tile) {
    need_params(k, 2, 0);
    const TSR *data = &k->in[0], *ind = &k->in[1], *upd = &k->in[2], *o = &k->out[0];
    int32_t q = (int32_t)k->ip[0], r = rank(data);
    int64_t red = k->ip[1], inner = 1, block[MAX_SHAPE_DIM];
    for (int32_t d = q; d < r; d++) inner *= dims(data)[d];
    row_major_strides(dims(data), q, block);
    int64_t rows = q ? count(ind) / q : 0;
    if (rows * inner != count(upd))
        tx_fail("%s: %lld updates of %lld elements, the window has %lld", k->op,
                (long long)rows, (long long)inner, (long long)count(upd));
    int64_t *ix = tx_read_i64(m, tile, ind);
    int64_t *at = tx_alloc((size_t)rows + 1, sizeof(int64_t));
    for (int64_t j = 0; j < rows; j++) {
        at[j] = 0;
        for (int32_t d = 0; d < q; d++)
            at[j] += wrapped_index(k, ix[j * q + d], dims(data)[d]) * block[d] * inner;
    }
    int floats = tx_is_float(data->format), wide = data->format == TX_F64;
    if (red == TX_SCATTER_NONE) {
        uint64_t *y = tx_read_raw(m, tile, data), *u = tx_read_raw(m, tile, upd);
        for (int64_t j = 0; j < rows; j++)
            memcpy(y + at[j], u + j * inner, (size_t)inner * sizeof(uint64_t));
        tx_write_raw(m, tile, o, y);
        free(y), free(u);
    } else if (floats) {
        double *y = tx_read_f64(m, tile, data), *u = tx_read_f64(m, tile, upd);
        for (int64_t j = 0; j < rows; j++)
            for (int64_t i = 0; i < inner; i++) {
                double *t = &y[at[j] + i];
                *t = wide ? scatter_f64(red, *t, u[j * inner + i])
                          : scatter_f32(red, (float)*t, (float)u[j * inner + i]);
            }
        tx_write_f64(m, tile, o, y, wide, k->combine);
        free(y), free(u);
    } else {
        int64_t *y = tx_read_i64(m, tile, data), *u = tx_read_i64(m, tile, upd);
        for (int64_t j = 0; j < rows; j++)
            for (int64_t i = 0; i < inner; i++)
                y[at[j] + i] = scatter_i64(red, y[at[j] + i], u[j * inner + i]);
        tx_write_i64(m, tile, o, y, k->combine);
        free(y), free(u);
    }
    free(ix), free(at);
}

/* TopK's order of two positions of a row: <0 when `a` comes first */
typedef struct { const double *f; const int64_t *i; int floats, largest; } TopKRow;

static int topk_before(const TopKRow *row, int64_t a, int64_t b) {
    if (row->floats) {
        double x = row->f[a], y = row->f[b];
        int xn = isnan(x), yn = isnan(y);
        if (xn || yn) return xn && !yn ? row->largest : (!xn && yn ? !row->largest : 0);
        return row->largest ? x > y : x < y;
    }
    return row->largest ? row->i[a] > row->i[b] : row->i[a] < row->i[b];
}

/* a stable merge sort of positions (equal values keep their order: lower index first) */
static void topk_sort(const TopKRow *row, int64_t *pos, int64_t *tmp, int64_t n) {
    if (n < 2) return;
    int64_t h = n / 2, i = 0, j = h, o = 0;
    topk_sort(row, pos, tmp, h);
    topk_sort(row, pos + h, tmp, n - h);
    while (i < h && j < n) tmp[o++] = topk_before(row, pos[j], pos[i]) ? pos[j++] : pos[i++];
    while (i < h) tmp[o++] = pos[i++];
    while (j < n) tmp[o++] = pos[j++];
    memcpy(pos, tmp, (size_t)n * sizeof(int64_t));
}

/* TopK. ip: axis, k, largest. Each row along axis (read whole) in order, largest first
 * (NaN counts as the largest) or smallest first (NaN last); equal values keep the lower
 * index first. Results: the first k values and their i64 indices (either may be unused). */
void op_topk(const TxKernel *k, TxMachine *m, int32_t tile) {
    need_params(k, 3, 0);
    const TSR *x = &k->in[0];
    int32_t r = rank(x), axis = (int32_t)k->ip[0];
    int64_t kk = k->ip[1], n = dims(x)[axis], outer = 1, inner = 1;
    for (int32_t d = 0; d < axis; d++) outer *= dims(x)[d];
    for (int32_t d = axis + 1; d < r; d++) inner *= dims(x)[d];
    TopKRow row = {NULL, NULL, tx_is_float(x->format), (int)k->ip[2]};
    uint64_t *raw = tx_read_raw(m, tile, x);
    double *f = row.floats ? tx_read_f64(m, tile, x) : NULL;
    int64_t *iv = row.floats ? NULL : tx_read_i64(m, tile, x);
    double *line_f = tx_alloc((size_t)n + 1, sizeof(double));
    int64_t *line_i = tx_alloc((size_t)n + 1, sizeof(int64_t));
    int64_t *pos = tx_alloc((size_t)n + 1, sizeof(int64_t)), *tmp = tx_alloc((size_t)n + 1,
                                                                           sizeof(int64_t));
    row.f = line_f, row.i = line_i;
    int64_t nout = outer * kk * inner;
    uint64_t *values = tx_alloc((size_t)nout + 1, sizeof(uint64_t));
    int64_t *indices = tx_alloc((size_t)nout + 1, sizeof(int64_t));
    for (int64_t a = 0; a < outer; a++)
        for (int64_t b = 0; b < inner; b++) {
            for (int64_t j = 0; j < n; j++) {
                int64_t e = (a * n + j) * inner + b;
                if (row.floats) line_f[j] = f[e];
                else line_i[j] = iv[e];
                pos[j] = j;
            }
            topk_sort(&row, pos, tmp, n);
            for (int64_t j = 0; j < kk; j++) {
                int64_t e = (a * kk + j) * inner + b;
                values[e] = raw[(a * n + pos[j]) * inner + b];
                indices[e] = pos[j];
            }
        }
    if (k->out_used[0]) tx_write_raw(m, tile, &k->out[0], values);
    if (k->n_out > 1 && k->out_used[1]) tx_write_i64(m, tile, &k->out[1], indices, k->combine);
    free(raw), free(f), free(iv), free(line_f), free(line_i), free(pos), free(tmp);
    free(values), free(indices);
}

/* Resize. ip: taps per output index T (1 nearest, 2 bilinear, 4 bicubic), crop
 * (tf_crop_and_resize), the extrapolation value's element bits (nearest), a 0/1 per dim
 * (interpolated), then for every interpolated dim the T input indices (of the whole
 * input) of each of the slice's output indices, then with crop for every interpolated
 * dim a 0/1 per output index (its source coordinate lies outside the input).
 * fp: with T > 1 the T weights of each output index of every interpolated dim, then the
 * extrapolation value. Nearest gathers the element bits; bilinear and bicubic (two
 * interpolated dims, H before W) weigh the taps along H for each W tap, then those
 * along W, each sum in order from its first product, in fp32 (f64 for f64 data). Other
 * dims follow the result. */
void op_resize(const TxKernel *k, TxMachine *m, int32_t tile) {
    const TSR *x = &k->in[0], *o = &k->out[0];
    int32_t r = rank(o);
    need_params(k, 3 + r, 1);
    int64_t T = k->ip[0], crop = k->ip[1];
    const int64_t *p = k->ip + 3 + r, *taps[MAX_SHAPE_DIM] = {0}, *outside[MAX_SHAPE_DIM] = {0};
    const double *f = k->fp, *weights[MAX_SHAPE_DIM] = {0};
    int32_t spatial[2], ns = 0;
    for (int32_t d = 0; d < r; d++)
        if (k->ip[3 + d]) {
            taps[d] = p, p += dims(o)[d] * T;
            if (T > 1) weights[d] = f, f += dims(o)[d] * T;
            if (T > 1 && ns < 2) spatial[ns] = d;
            if (T > 1) ns++;
        }
    for (int32_t d = 0; d < r && crop; d++)
        if (k->ip[3 + d]) outside[d] = p, p += dims(o)[d];
    if (p - k->ip > k->nip || f - k->fp >= k->nfp || (T > 1 && ns != 2))
        tx_fail("%s: params do not match the slice", k->op);
    double extrapolation = k->fp[k->nfp - 1];
    int64_t st[MAX_SHAPE_DIM], idx[MAX_SHAPE_DIM] = {0}, n = count(o);
    row_major_strides(dims(x), r, st);
    /* each output index's taps as offsets into the input window (times the stride) */
    int64_t *local[MAX_SHAPE_DIM] = {0};
    for (int32_t d = 0; d < r; d++)
        if (taps[d]) {
            local[d] = tx_alloc((size_t)(dims(o)[d] * T) + 1, sizeof(int64_t));
            for (int64_t i = 0; i < dims(o)[d] * T; i++)
                local[d][i] = window_index(k, x, d, taps[d][i]) * st[d];
        }
    int wide = computes_f64(k);
    uint64_t *raw = T == 1 && n ? tx_read_raw(m, tile, x) : NULL;
    double *v = T > 1 && n ? tx_read_f64(m, tile, x) : NULL;
    uint64_t *yr = tx_alloc((size_t)n + 1, sizeof(uint64_t));
    double *y = tx_alloc((size_t)n + 1, sizeof(double));
    for (int64_t e = 0; e < n; e++) {
        int64_t base = 0;
        int out = 0;
        for (int32_t d = 0; d < r; d++) {
            if (!taps[d]) base += idx[d] * st[d];
            else if (T == 1) base += local[d][idx[d]];
            if (outside[d] && outside[d][idx[d]]) out = 1;
        }
        if (T == 1) {
            yr[e] = out ? (uint64_t)k->ip[2] : raw[base];
        } else if (out) {
            y[e] = extrapolation;
        } else {
            int32_t h = spatial[0], w = spatial[1];
            const int64_t *th = local[h] + idx[h] * T, *tw = local[w] + idx[w] * T;
            const double *wh = weights[h] + idx[h] * T, *ww = weights[w] + idx[w] * T;
            double acc = 0.0;
            float accf = 0.0f;
            for (int64_t b = 0; b < T; b++) {
                double col = 0.0;
                float colf = 0.0f;
                for (int64_t a = 0; a < T; a++) {
                    double xv = v[base + th[a] + tw[b]];
                    if (wide) col = a ? col + xv * wh[a] : xv * wh[a];
                    else colf = a ? colf + (float)xv * (float)wh[a] : (float)xv * (float)wh[a];
                }
                if (wide) acc = b ? acc + col * ww[b] : col * ww[b];
                else accf = b ? accf + colf * (float)ww[b] : colf * (float)ww[b];
            }
            y[e] = wide ? acc : accf;
        }
        tx_next_index(idx, dims(o), r);
    }
    if (T == 1) tx_write_raw(m, tile, o, yr);
    else tx_write_f64(m, tile, o, y, wide, k->combine);
    for (int32_t d = 0; d < r; d++) free(local[d]);
    free(raw), free(v), free(yr), free(y);
}
