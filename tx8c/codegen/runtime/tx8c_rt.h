/* tx8c C runtime: the op library of tx8c in portable C11, run on the host CPU in place
 * of a TX8 chip (seed 003, "OpLibInterface": main.c load -> compute -> store, TSR,
 * L_SHAPE, G_SHAPE).
 *
 * Memory: DDR is one byte array, every tile's SPM another (tx_machine). A TSR names a
 * tensor in one of them: its element type (`format`), its memory layout (Tensor,
 * NTensor, Cx, NCx: the byte layouts of tx8c/target/mem_layout.py), its byte address and
 * its L_SHAPE (the whole operand's shape, where this window starts in it, the window's
 * size). In SPM the bytes at `addr` hold the buffer's window (`shape_real` elements from
 * `shape_origin`) as a tensor of `shape_real` in `layout`, and the TSR's window is part
 * of it; in DDR `addr` is where the whole tensor starts and the window is read in
 * place (an embedding table a Gather reads straight from DDR).
 *
 * Kernels compute one slice exactly as the op's `compute_slice` in Python does: they
 * read their operand windows into dense row-major arrays, compute with the same
 * precision (fp32 arithmetic rounded per operation, Gemm/Conv accumulation in double,
 * numpy's pairwise summation for the reductions numpy sums pairwise), and write their
 * result windows back in the result's layout. Every access is bounds-checked: an address
 * outside its memory stops the run with a message naming group, tile and instruction.
 */
#ifndef TX8C_RT_H
#define TX8C_RT_H

#include <stddef.h>
#include <stdint.h>

#define MAX_SHAPE_DIM 8
#define TX_MAX_OPERANDS 8
#define TX_MAX_RESULTS 8

/* element types (Data_Format) */
typedef enum Data_Format {
    TX_F32 = 0, TX_F16, TX_BF16, TX_F64, TX_I8, TX_U8, TX_I16, TX_I32, TX_I64, TX_BOOL,
    TX_TF32
} Data_Format;

/* memory layouts (tx8c.dialect.attrs.LayoutMode) */
typedef enum { TX_TENSOR = 0, TX_NTENSOR, TX_CX, TX_NCX } TxLayout;

/* where a TSR lives */
/* TX_RESIDENT: a tensor kept between groups in pages over every tile's SPM (addr: its
 * first page's SPM address on every tile; see TxDma.page) */
typedef enum { TX_SPM = 0, TX_DDR = 1, TX_RESIDENT = 2 } TxSpace;

typedef enum { TX_COMBINE_NONE = 0, TX_COMBINE_SUM, TX_COMBINE_MAX, TX_COMBINE_MIN,
               TX_COMBINE_PROD } TxCombine;

typedef struct L_SHAPE {
    int32_t shape_whole[MAX_SHAPE_DIM];  /* the whole shape */
    int32_t shape_start[MAX_SHAPE_DIM];  /* start idx of the shape slice */
    int32_t shape_slice[MAX_SHAPE_DIM];  /* length of the shape slice */
    int32_t shape_real[MAX_SHAPE_DIM];   /* real length of the shape slice: in SPM, the
                                          * shape of the window the buffer holds (a kernel
                                          * may read part of it: a value loaded once with a
                                          * Conv's halo and read by an Add) */
    int32_t shape_origin[MAX_SHAPE_DIM]; /* in SPM, where the buffer's window starts in
                                          * the whole shape (shape_start - shape_origin is
                                          * where the slice starts in the buffer) */
    int32_t dim;                         /* dimension of the shape */
} L_SHAPE;

/* G_SHAPE: the seed's DMA progress record (spatial window of a load and whether the load
 * is done); tx_dma fills one per transfer so a caller can follow the loads. */
typedef struct G_SHAPE {
    int32_t spatial_start[MAX_SHAPE_DIM];
    int32_t spatial_end[MAX_SHAPE_DIM];
    int32_t dynamic_offset[MAX_SHAPE_DIM];
    int32_t shape[MAX_SHAPE_DIM];
    int32_t dim;
    int32_t done;
    int32_t batch_offset[MAX_SHAPE_DIM];
} G_SHAPE;

typedef struct TSR {
    Data_Format format;
    int32_t layout;   /* TxLayout */
    int32_t space;    /* TxSpace */
    uint64_t addr;    /* byte address in its memory */
    L_SHAPE shape;
} TSR;

/* hardware numbers the layouts depend on (TX8Config) */
typedef struct TxConfig {
    int64_t batch_align_bytes;
    int64_t channel_block_float, channel_block_int8;
    int32_t pad_steps_float[8], n_pad_steps_float;
    int32_t pad_steps_int8[8], n_pad_steps_int8;
} TxConfig;

/* the machine: DDR and every tile's SPM */
typedef struct TxMachine {
    uint8_t *ddr;
    uint64_t ddr_bytes;
    uint8_t **spm;
    uint64_t spm_bytes;
    int32_t tiles;
    TxConfig config;
} TxMachine;

struct TxKernel;
typedef void (*TxKernelFn)(const struct TxKernel *k, TxMachine *m, int32_t tile);

/* one kernel call (seed 003: the op's genOpCode call with its params and TSRs) */
typedef struct TxKernel {
    TxKernelFn fn;
    const char *op;           /* the op's name and node, for messages */
    const int64_t *ip;        /* integer params (gen_op_code) */
    int32_t nip;
    const double *fp;         /* float params */
    int32_t nfp;
    L_SHAPE loops;            /* the slice of the op's loop space */
    int32_t n_in, n_out;
    const TSR *in;            /* n_in operand windows */
    const TSR *out;           /* n_out result windows */
    const int32_t *out_used;  /* per result, 0: the slice produces nothing of it */
    int32_t combine;          /* TxCombine when the result accumulates into its buffer */
} TxKernel;

typedef struct TxDma {
    int32_t store;   /* 0: DDR -> SPM (RDMA), 1: SPM -> DDR (WDMA) */
    const char *tensor;
    TSR ddr;         /* the whole DDR tensor, the window in shape_start/shape_slice */
    TSR spm;         /* the SPM buffer (shape_slice: the window it holds; shape_start:
                        where the moved window starts inside it) */
    uint64_t page;   /* TX_RESIDENT: bytes of a page; page p of the tensor's bytes lives
                        on tile p % tiles at ddr.addr + (p / tiles) * page */
} TxDma;

/* A NoC reduction (combine: how the partial is added), or one destination of a multicast
 * load (TX_COMBINE_NONE: the source's loaded window is copied). */
typedef struct TxNoc {
    int32_t source_tile;
    TSR source;
    TSR target;
    int32_t combine;
    int32_t after;   /* the source tile's instruction after which the partial is complete */
} TxNoc;

typedef enum { TX_I_DMA = 0, TX_I_KERNEL, TX_I_NOC } TxInstrKind;

typedef struct TxInstr {
    int32_t kind;
    const TxDma *dma;
    const TxKernel *kernel;
    const TxNoc *noc;
} TxInstr;

/* -- runtime API -------------------------------------------------------------------- */
void tx_set_context(int32_t group, int32_t tile, int32_t instr, const char *what);
void tx_fail(const char *fmt, ...);
void tx_run(TxMachine *m, int32_t group, int32_t tile, const TxInstr *code, int32_t n);
/* One group on its tiles: each tile's instructions in order, interleaved so that a NoC
 * reduction runs after its source tile's instruction `after`, and the source tile does
 * not go past that instruction before the reduction has read its partial sum (the
 * semaphore pair of the Program). */
void tx_run_group(TxMachine *m, int32_t group, int32_t n_tiles, const int32_t *tiles,
                  const TxInstr *const *code, const int32_t *counts);
void tx_dma(TxMachine *m, int32_t tile, const TxDma *d, G_SHAPE *g);
void tx_noc_reduce(TxMachine *m, int32_t tile, const TxNoc *r);

/* element types */
int32_t tx_itemsize(int32_t format);
int tx_is_float(int32_t format);
double tx_f16_to_f64(uint16_t h);
uint16_t tx_f64_to_f16(double v);
double tx_bf16_to_f64(uint16_t h);
uint16_t tx_f64_to_bf16(double v);

/* layouts */
typedef struct TxPlan {
    int32_t rank, layout;
    int32_t shape[MAX_SHAPE_DIM];
    int64_t n, hw, c, block, cx, c0, c0p, itemsize, stride, total;
    int aligned;
} TxPlan;
void tx_plan(TxPlan *p, const int32_t *shape, int32_t rank, int32_t format, int32_t layout,
             const TxConfig *cfg);
int64_t tx_plan_address(const TxPlan *p, int64_t n, int64_t hw, int64_t c);
int64_t tx_element_address(const TxPlan *p, const int64_t *index);
int64_t tx_volume(const int32_t *shape, int32_t rank);
/* steps `idx` to the next row-major index of `shape` (wraps to all zeros at the end) */
void tx_next_index(int64_t *idx, const int32_t *shape, int32_t rank);

/* reading and writing a TSR's window as a dense row-major array */
uint8_t *tx_base(TxMachine *m, int32_t tile, const TSR *t, int64_t bytes);
double *tx_read_f64(TxMachine *m, int32_t tile, const TSR *t);
int64_t *tx_read_i64(TxMachine *m, int32_t tile, const TSR *t);
uint64_t *tx_read_raw(TxMachine *m, int32_t tile, const TSR *t);
/* `f64`: the values were computed in double (an f64 op); otherwise they are fp32 results
 * and round to fp32 before a narrower type (numpy's f32 compute then astype) */
void tx_write_f64(TxMachine *m, int32_t tile, const TSR *t, const double *v, int f64,
                  int32_t combine);
void tx_write_i64(TxMachine *m, int32_t tile, const TSR *t, const int64_t *v,
                  int32_t combine);
void tx_write_raw(TxMachine *m, int32_t tile, const TSR *t, const uint64_t *v);
void *tx_alloc(size_t count, size_t size);

/* numpy's float32 summation: pairwise with eight accumulators (numpy's pairwise_sum) */
float tx_pairwise_sum_f32(const float *a, int64_t n, int64_t stride);

/* kernels (tx8c_kernels.c), one per op family; their params are documented there */
void op_copy(const TxKernel *k, TxMachine *m, int32_t tile);
void op_broadcast(const TxKernel *k, TxMachine *m, int32_t tile);
void op_transpose(const TxKernel *k, TxMachine *m, int32_t tile);
void op_slice(const TxKernel *k, TxMachine *m, int32_t tile);
void op_concat(const TxKernel *k, TxMachine *m, int32_t tile);
void op_split(const TxKernel *k, TxMachine *m, int32_t tile);
void op_gather(const TxKernel *k, TxMachine *m, int32_t tile);
void op_binary(const TxKernel *k, TxMachine *m, int32_t tile);
void op_where(const TxKernel *k, TxMachine *m, int32_t tile);
void op_unary(const TxKernel *k, TxMachine *m, int32_t tile);
void op_cast(const TxKernel *k, TxMachine *m, int32_t tile);
void op_gemm(const TxKernel *k, TxMachine *m, int32_t tile);
void op_conv(const TxKernel *k, TxMachine *m, int32_t tile);
void op_pool(const TxKernel *k, TxMachine *m, int32_t tile);
void op_reduce(const TxKernel *k, TxMachine *m, int32_t tile);
void op_softmax(const TxKernel *k, TxMachine *m, int32_t tile);
void op_layernorm(const TxKernel *k, TxMachine *m, int32_t tile);
void op_rmsnorm(const TxKernel *k, TxMachine *m, int32_t tile);
void op_batchnorm(const TxKernel *k, TxMachine *m, int32_t tile);
void op_tile(const TxKernel *k, TxMachine *m, int32_t tile);
void op_pad(const TxKernel *k, TxMachine *m, int32_t tile);
void op_gather_elements(const TxKernel *k, TxMachine *m, int32_t tile);
void op_scatter_nd(const TxKernel *k, TxMachine *m, int32_t tile);
void op_topk(const TxKernel *k, TxMachine *m, int32_t tile);
void op_resize(const TxKernel *k, TxMachine *m, int32_t tile);

/* op codes of op_binary and op_unary (ip[0]) */
enum {
    TX_ADD = 0, TX_SUB, TX_MUL, TX_DIV, TX_MAX, TX_MIN, TX_POW, TX_MOD, TX_FMOD,
    TX_EQUAL, TX_LESS, TX_LESS_EQUAL, TX_GREATER, TX_GREATER_EQUAL, TX_AND, TX_OR
};
enum {
    TX_RELU = 0, TX_SIGMOID, TX_TANH, TX_ERF, TX_EXP, TX_LOG, TX_SQRT, TX_RSQRT,
    TX_RECIPROCAL, TX_ABS, TX_NEG, TX_NOT, TX_SIN, TX_COS, TX_FLOOR, TX_CEIL, TX_ROUND,
    TX_ATAN, TX_LEAKY_RELU, TX_HARD_SIGMOID, TX_CLIP, TX_SILU, TX_HARD_SWISH, TX_GELU,
    TX_GELU_TANH
};
/* op_reduce / op_pool modes */
enum { TX_R_SUM = 0, TX_R_MEAN, TX_R_MAX, TX_R_MIN, TX_R_PROD };
/* op_pad modes, op_scatter_nd reductions */
enum { TX_PAD_CONSTANT = 0, TX_PAD_REFLECT, TX_PAD_EDGE, TX_PAD_WRAP };
enum { TX_SCATTER_NONE = 0, TX_SCATTER_ADD, TX_SCATTER_MUL, TX_SCATTER_MAX, TX_SCATTER_MIN };

#endif
