/* The decode step's attention over the DecodeCache rows, as the engine's batched GEMMs compute it.
 *
 * invariant_attention.attend_rows computes, per (sequence, key/value head), with MKL's sgemm:
 *
 *     scores[r][j] = (sum over d, in order, of q[r][d] * k[d][j]) * scale   (masked: FLT_MIN)
 *     out[r]       = sum over key chunks c of 128, in order, of
 *                    (sum over keys j of c, in order, of p[r][j] * v[j])
 *
 * where every inner sum is one chain of fused multiply-adds (MKL's sgemm sums a product so, at
 * the engine's and the trainer's shapes, on the CPUs the engine probes it on). These two
 * functions compute the same chains: the scores before the softmax (which stays torch's) and
 * the weighted values after it, without the GEMMs' per-matrix cost (two sgemm calls per
 * (sequence, head) of 3 x 64 x a few hundred each) and without padding rows. Keys a query does
 * not see are skipped: their weight is exactly zero, so the chain is unchanged. The engine uses
 * them only where a start-up probe finds their bits equal to attend_rows' (fast_attention.py).
 *
 * Layouts (float32, strides in elements):
 *   q       query t of sequence b, head h * G + g (g of the G sharing key/value head h): its D
 *           values from q + qidx[b * n + t] * q_tok + (h * G + g) * q_head (the step's token
 *           rows [tokens, heads, D] with qidx the rows' tokens, or [pairs, R, D] with q_head = n * D)
 *   out     the same addressing, (oidx, o_tok, o_head)
 *   scores  [pairs, R, width], pair = b * kv + h, row r = g * n + t
 *   k_t     keys, transposed: pair (b, h) at k_t + b * k_row + h * k_head, element [d][j] at d * k_d + j
 *   v       values: pair (b, h) at v + b * v_row + h * v_head, element [j][d] at j * v_j + d
 *   limit   [batch, n] int64: query t of sequence b sees keys lo .. limit[b][t]
 *           (lo = limit - window + 1 with a sliding window, else 0)
 *   counts  [batch] int64 or NULL: sequence b's real queries, t < counts[b]; the others pad a
 *           batch verifying drafts of different lengths to the longest and are not computed
 *           (their rows of scores and of the output are left as they were)
 *   shared  positions below it hold the same keys and values in every sequence's row: they are
 *           read from sequence 0's, which stays in cache while the other sequences read it
 */
#include <float.h>
#include <math.h>
#include <stdint.h>

#if defined(__AVX512F__)
#include <immintrin.h>
#define W 16
typedef __m512 vec;
#define vzero() _mm512_setzero_ps()
#define vload(p) _mm512_loadu_ps(p)
#define vstore(p, x) _mm512_storeu_ps(p, x)
#define vset1(x) _mm512_set1_ps(x)
#define vfma(a, b, c) _mm512_fmadd_ps(a, b, c)
#define vadd(a, b) _mm512_add_ps(a, b)
#define vmul(a, b) _mm512_mul_ps(a, b)
#define vload_i8(p) _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(p))))
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define W 8
typedef __m256 vec;
#define vzero() _mm256_setzero_ps()
#define vload(p) _mm256_loadu_ps(p)
#define vstore(p, x) _mm256_storeu_ps(p, x)
#define vset1(x) _mm256_set1_ps(x)
#define vfma(a, b, c) _mm256_fmadd_ps(a, b, c)
#define vadd(a, b) _mm256_add_ps(a, b)
#define vmul(a, b) _mm256_mul_ps(a, b)
#define vload_i8(p) _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(p))))
#else
#define W 1
typedef float vec;
#define vzero() 0.0f
#define vload(p) (*(p))
#define vstore(p, x) (*(p) = (x))
#define vset1(x) (x)
#define vfma(a, b, c) fmaf(a, b, c)
#define vadd(a, b) ((a) + (b))
#define vmul(a, b) ((a) * (b))
#define vload_i8(p) ((float)*(p))
#endif

#define MAX_GROUP 8 /* the group sizes unrolled below; larger groups go 8 heads at a time */
#define DB 8
#define KEY_CHUNK 128

int vector_width(void) { return W; }

/* a padding query (a row verifying fewer draft tokens than the batch's longest) may reach past
   the width: its output is dropped, but it must not read past the scores */
static inline int64_t clamp_limit(int64_t hi, int64_t width) { return hi < width - 1 ? hi : width - 1; }

/* A cache element: float32, or with q8 an int8 whose (token, head) scale the callers apply
   (the int8 KV cache, kv_quant.py). q8 is a constant at every call, so each caller compiles
   to one of the two loads and the float32 path is the instructions it always was. */
static inline vec load_elems(const void *base, int64_t index, const int q8) {
    return q8 ? vload_i8((const int8_t *)base + index) : vload((const float *)base + index);
}
static inline float elem(const void *base, int64_t index, const int q8) {
    return q8 ? (float)((const int8_t *)base)[index] : ((const float *)base)[index];
}

static inline int64_t lower_bound(int64_t hi, int64_t window) {
    return window > 0 && hi - window + 1 > 0 ? hi - window + 1 : 0;
}

/* one (pair, t): the G rows' scores over keys [0, width). The chains run over d in the outer
   loop, each score accumulating in place in `scores`: the keys are then read row by row of
   k_t, contiguous, where a loop over d inside would stride by the cache's capacity (4 KB and
   more, every line in one cache set). */
static inline void scores_one(const float *const *rows, float *const *out, const void *k_own, const void *k_first,
                              int64_t k_d, int64_t shared, int64_t D, int64_t lo, int64_t hi, float scale,
                              int64_t width, const int G, const float *s_own, const float *s_first, const int q8) {
    /* the keys seen, in whole vectors (the rest of each vector is masked below) */
    const int64_t j_lo = lo / W * W, j_hi = hi + 1, vec_end = j_lo + (j_hi - j_lo) / W * W;
    for (int g = 0; g < G; g++)
        for (int64_t j = j_lo; j < j_hi; j++) out[g][j] = 0.0f;
    int64_t d = 0;
    /* DB key rows a pass: each accumulator is loaded and stored once per DB multiply-adds */
    for (; d + DB <= D; d += DB) {
        int64_t j = j_lo;
        for (; j < vec_end; j += W) {
            const void *k = j + W <= shared ? k_first : k_own;
            vec kv[DB];
            for (int i = 0; i < DB; i++) kv[i] = load_elems(k, (d + i) * k_d + j, q8);
            for (int g = 0; g < G; g++) {
                vec acc = vload(out[g] + j);
                for (int i = 0; i < DB; i++) acc = vfma(vset1(rows[g][d + i]), kv[i], acc);
                vstore(out[g] + j, acc);
            }
        }
        for (; j < j_hi; j++)
            for (int g = 0; g < G; g++)
                for (int i = 0; i < DB; i++)
                    out[g][j] = fmaf(rows[g][d + i], elem(k_own, (d + i) * k_d + j, q8), out[g][j]);
    }
    for (; d < D; d++) {
        int64_t j = j_lo;
        for (; j < vec_end; j += W) {
            const vec kv = load_elems(j + W <= shared ? k_first : k_own, d * k_d + j, q8);
            for (int g = 0; g < G; g++) vstore(out[g] + j, vfma(vset1(rows[g][d]), kv, vload(out[g] + j)));
        }
        for (; j < j_hi; j++)
            for (int g = 0; g < G; g++) out[g][j] = fmaf(rows[g][d], elem(k_own, d * k_d + j, q8), out[g][j]);
    }
    const vec vscale = vset1(scale);
    for (int g = 0; g < G; g++) {
        int64_t j = j_lo;
        if (q8) { /* each key's own scale times the softmax's */
            for (; j < vec_end; j += W)
                vstore(out[g] + j, vmul(vload(out[g] + j), vmul(vscale, vload((j + W <= shared ? s_first : s_own) + j))));
            for (; j < j_hi; j++) out[g][j] = out[g][j] * (scale * s_own[j]);
        } else {
            for (; j < vec_end; j += W) vstore(out[g] + j, vmul(vload(out[g] + j), vscale));
            for (; j < j_hi; j++) out[g][j] = out[g][j] * scale;
        }
        for (j = 0; j < lo; j++) out[g][j] = -FLT_MAX;
        for (j = hi + 1; j < width; j++) out[g][j] = -FLT_MAX;
    }
}

/* query t of sequence b, head h * G + g: its row of q, and where its output goes */
static inline const float *query_row(const float *q, const int64_t *qidx, int64_t q_tok, int64_t q_head,
                                     int64_t b, int64_t n, int64_t t, int64_t head) {
    return q + qidx[b * n + t] * q_tok + head * q_head;
}

static inline void scores_all(const float *q, const int64_t *qidx, int64_t q_tok, int64_t q_head, const void *k_t,
                              int64_t k_row, int64_t k_head, int64_t k_d, const int64_t *limit, const int64_t *counts,
                              int64_t batch, int64_t kv, int64_t G, int64_t n, int64_t D, int64_t width, int64_t shared,
                              int64_t window, float scale, float *scores, const float *k_scale, int64_t s_row,
                              int64_t s_head, const int q8) {
    const int64_t elem_size = q8 ? 1 : 4;
    const int64_t R = G * n;
    for (int64_t h = 0; h < kv; h++) {
        for (int64_t b = 0; b < batch; b++) {
            const int64_t pair = b * kv + h;
            const void *k_own = (const char *)k_t + (b * k_row + h * k_head) * elem_size;
            const void *k_first = (const char *)k_t + h * k_head * elem_size;
            const float *s_own = q8 ? k_scale + b * s_row + h * s_head : 0, *s_first = q8 ? k_scale + h * s_head : 0;
            for (int64_t t = 0; t < (counts ? counts[b] : n); t++) {
                const int64_t hi = clamp_limit(limit[b * n + t], width), lo = lower_bound(hi, window);
                for (int64_t g0 = 0; g0 < G; g0 += MAX_GROUP) {  /* groups above 8: 8 heads at a time */
                    const int64_t count = G - g0 < MAX_GROUP ? G - g0 : MAX_GROUP;
                    const float *rows[MAX_GROUP];
                    float *out[MAX_GROUP];
                    for (int64_t g = 0; g < count; g++) {
                        rows[g] = query_row(q, qidx, q_tok, q_head, b, n, t, h * G + g0 + g);
                        out[g] = scores + (pair * R + (g0 + g) * n + t) * width;
                    }
                    switch (count) {  /* a constant group size keeps the accumulators in registers */
#define CASE(g) \
    case g: scores_one(rows, out, k_own, k_first, k_d, shared, D, lo, hi, scale, width, g, s_own, s_first, q8); break;
                        CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8)
#undef CASE
                    }
                }
            }
        }
    }
}

void decode_scores(const float *q, const int64_t *qidx, int64_t q_tok, int64_t q_head, const float *k_t, int64_t k_row,
                   int64_t k_head, int64_t k_d, const int64_t *limit, const int64_t *counts, int64_t batch, int64_t kv,
                   int64_t G, int64_t n, int64_t D, int64_t width, int64_t shared, int64_t window, float scale,
                   float *scores) {
    scores_all(q, qidx, q_tok, q_head, k_t, k_row, k_head, k_d, limit, counts, batch, kv, G, n, D, width, shared, window,
               scale, scores, 0, 0, 0, 0);
}

/* decode_scores over int8 keys with a float32 scale per (row, head, position): k_scale + b *
   s_row + h * s_head + j. Strides in elements. */
void decode_scores_q8(const float *q, const int64_t *qidx, int64_t q_tok, int64_t q_head, const int8_t *k_t,
                      int64_t k_row, int64_t k_head, int64_t k_d, const int64_t *limit, const int64_t *counts,
                      int64_t batch, int64_t kv, int64_t G, int64_t n, int64_t D, int64_t width, int64_t shared,
                      int64_t window, float scale, float *scores, const float *k_scale, int64_t s_row, int64_t s_head) {
    scores_all(q, qidx, q_tok, q_head, k_t, k_row, k_head, k_d, limit, counts, batch, kv, G, n, D, width, shared, window,
               scale, scores, k_scale, s_row, s_head, 1);
}

/* one (pair, t): the G rows' weighted values, all D columns */
static inline void values_one(const float *const *rows, float *const *dst, const void *v_own, const void *v_first,
                              int64_t v_j, int64_t shared, int64_t width, int64_t D, int64_t lo, int64_t hi,
                              const int G, const float *s_own, const float *s_first, const int q8) {
    int64_t d0 = 0;
    for (; d0 + W <= D; d0 += W) {
        vec total[MAX_GROUP];
        int first = 1;
        for (int g = 0; g < G; g++) total[g] = vzero();
        for (int64_t c0 = 0; c0 < width; c0 += KEY_CHUNK) {
            const int64_t a = c0 > lo ? c0 : lo;
            const int64_t e = c0 + KEY_CHUNK < hi + 1 ? c0 + KEY_CHUNK : hi + 1;
            if (a >= e) continue; /* a chunk of unseen keys adds exact zeros */
            vec part[MAX_GROUP];
            for (int g = 0; g < G; g++) part[g] = vzero();
            for (int64_t j = a; j < e; j++) {
                const vec vv = load_elems(j < shared ? v_first : v_own, j * v_j + d0, q8);
                const float s = q8 ? (j < shared ? s_first : s_own)[j] : 1.0f;
                for (int g = 0; g < G; g++) part[g] = vfma(vset1(q8 ? rows[g][j] * s : rows[g][j]), vv, part[g]);
            }
            for (int g = 0; g < G; g++) total[g] = first ? part[g] : vadd(total[g], part[g]);
            first = 0;
        }
        for (int g = 0; g < G; g++) vstore(dst[g] + d0, total[g]);
    }
    for (; d0 < D; d0++) {
        for (int g = 0; g < G; g++) {
            float total = 0.0f;
            int first = 1;
            for (int64_t c0 = 0; c0 < width; c0 += KEY_CHUNK) {
                const int64_t a = c0 > lo ? c0 : lo;
                const int64_t e = c0 + KEY_CHUNK < hi + 1 ? c0 + KEY_CHUNK : hi + 1;
                if (a >= e) continue;
                float part = 0.0f;
                for (int64_t j = a; j < e; j++) {
                    const void *vs = j < shared ? v_first : v_own;
                    const float w = q8 ? rows[g][j] * (j < shared ? s_first : s_own)[j] : rows[g][j];
                    part = fmaf(w, elem(vs, j * v_j + d0, q8), part);
                }
                total = first ? part : total + part;
                first = 0;
            }
            dst[g][d0] = total;
        }
    }
}

static inline void values_all(const float *probs, const void *v, int64_t v_row, int64_t v_head, int64_t v_j,
                              const int64_t *limit, const int64_t *counts, int64_t batch, int64_t kv, int64_t G,
                              int64_t n, int64_t D, int64_t width, int64_t shared, int64_t window, float *out,
                              const int64_t *oidx, int64_t o_tok, int64_t o_head, const float *v_scale, int64_t s_row,
                              int64_t s_head, const int q8) {
    const int64_t elem_size = q8 ? 1 : 4;
    const int64_t R = G * n;
    for (int64_t h = 0; h < kv; h++) {
        for (int64_t b = 0; b < batch; b++) {
            const int64_t pair = b * kv + h;
            const void *v_own = (const char *)v + (b * v_row + h * v_head) * elem_size;
            const void *v_first = (const char *)v + h * v_head * elem_size;
            const float *s_own = q8 ? v_scale + b * s_row + h * s_head : 0, *s_first = q8 ? v_scale + h * s_head : 0;
            for (int64_t t = 0; t < (counts ? counts[b] : n); t++) {
                const int64_t hi = clamp_limit(limit[b * n + t], width), lo = lower_bound(hi, window);
                for (int64_t g0 = 0; g0 < G; g0 += MAX_GROUP) {
                    const int64_t count = G - g0 < MAX_GROUP ? G - g0 : MAX_GROUP;
                    const float *rows[MAX_GROUP];
                    float *dst[MAX_GROUP];
                    for (int64_t g = 0; g < count; g++) {
                        rows[g] = probs + (pair * R + (g0 + g) * n + t) * width;
                        dst[g] = (float *)query_row(out, oidx, o_tok, o_head, b, n, t, h * G + g0 + g);
                    }
                    switch (count) {
#define CASE(g) \
    case g: values_one(rows, dst, v_own, v_first, v_j, shared, width, D, lo, hi, g, s_own, s_first, q8); break;
                        CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8)
#undef CASE
                    }
                }
            }
        }
    }
}

void decode_values(const float *probs, const float *v, int64_t v_row, int64_t v_head, int64_t v_j,
                   const int64_t *limit, const int64_t *counts, int64_t batch, int64_t kv, int64_t G, int64_t n,
                   int64_t D, int64_t width, int64_t shared, int64_t window, float *out, const int64_t *oidx,
                   int64_t o_tok, int64_t o_head) {
    values_all(probs, v, v_row, v_head, v_j, limit, counts, batch, kv, G, n, D, width, shared, window, out, oidx, o_tok,
               o_head, 0, 0, 0, 0);
}

/* decode_values over int8 values with a float32 scale per (row, head, position), as decode_scores_q8's */
void decode_values_q8(const float *probs, const int8_t *v, int64_t v_row, int64_t v_head, int64_t v_j,
                      const int64_t *limit, const int64_t *counts, int64_t batch, int64_t kv, int64_t G, int64_t n,
                      int64_t D, int64_t width, int64_t shared, int64_t window, float *out, const int64_t *oidx,
                      int64_t o_tok, int64_t o_head, const float *v_scale, int64_t s_row, int64_t s_head) {
    values_all(probs, v, v_row, v_head, v_j, limit, counts, batch, kv, G, n, D, width, shared, window, out, oidx, o_tok,
               o_head, v_scale, s_row, s_head, 1);
}

/* This step's keys and values into the DecodeCache rows (what the indexed assignments
 * k_t[rows, :, :, positions] = k[:, tokens] and v[rows, :, positions] = v[:, tokens] do; the
 * first, into the transposed layout, cost about 25 us a layer as an index_put).
 *   k, v      [kv, tokens, D] with strides (k_h, k_tok, 1), (v_h, v_tok, 1)
 *   token i of `count` goes to row rows[i], position positions[i] */
void decode_cache_write(const float *k, int64_t k_h, int64_t k_tok, const float *v, int64_t v_h, int64_t v_tok,
                        const int64_t *tokens, const int64_t *rows, const int64_t *positions, int64_t count,
                        int64_t kv, int64_t D, float *k_t, int64_t ck_row, int64_t ck_head, int64_t ck_d,
                        float *v_cache, int64_t cv_row, int64_t cv_head, int64_t cv_j) {
    for (int64_t i = 0; i < count; i++) {
        const int64_t token = tokens[i], row = rows[i], position = positions[i];
        for (int64_t h = 0; h < kv; h++) {
            const float *ks = k + h * k_h + token * k_tok, *vs = v + h * v_h + token * v_tok;
            float *kd = k_t + row * ck_row + h * ck_head + position;
            float *vd = v_cache + row * cv_row + h * cv_head + position * cv_j;
            for (int64_t d = 0; d < D; d++) {
                kd[d * ck_d] = ks[d];
                vd[d] = vs[d];
            }
        }
    }
}

/* The step's rotary embedding and cache writes in one pass over its stacked q/k/v projection,
 * as model_runner computes them with torch (_rotated_together, then attend's assignments):
 *
 *     rotated[d] = x[d] * cos[d] + x[(d + D/2) mod D] * signed_sin[d]
 *
 * each product rounded, then the sum (no fused multiply-add: -ffp-contract=off), which is
 * _rotate's x * cos + roll(x, D/2) * signed_sin to the bit. Token i's query heads go to
 * q_out[i] ([tokens, H, D] contiguous); its rotated key heads and its value heads to the paged
 * cache at slots[i] (k_cache + h * kc_h + slot * kc_s, [kv, slots, D] per layer), and where
 * dest_rows[i] >= 0 also to that DecodeCache row at position dest_pos[i] (keys transposed,
 * as decode_cache_write places them).
 *   qkv     token i's projection at qkv + i * qkv_tok: H query heads, kv key heads, kv value heads
 *   cos, ss [tokens, D] contiguous: cos and sin with its first half negated (model_runner._rotation) */
void rope_cache_write(const float *qkv, int64_t qkv_tok, int64_t tokens, int64_t H, int64_t kv, int64_t D,
                      const float *cos, const float *ss, const int64_t *slots, float *q_out,
                      float *k_cache, int64_t kc_h, int64_t kc_s, float *v_cache, int64_t vc_h, int64_t vc_s,
                      const int64_t *dest_rows, const int64_t *dest_pos, float *k_t, int64_t ck_row, int64_t ck_head,
                      int64_t ck_d, float *v_t, int64_t cv_row, int64_t cv_head, int64_t cv_j) {
    const int64_t half = D / 2;
    float rotated[D];
    for (int64_t i = 0; i < tokens; i++) {
        const float *c = cos + i * D, *s = ss + i * D, *row = qkv + i * qkv_tok;
        const int64_t slot = slots[i], dest = dest_rows ? dest_rows[i] : -1, pos = dest_rows ? dest_pos[i] : 0;
        for (int64_t h = 0; h < H + kv; h++) {
            const float *x = row + h * D;
            float *y = h < H ? q_out + (i * H + h) * D : rotated;
            for (int64_t d = 0; d < half; d++) y[d] = x[d] * c[d] + x[d + half] * s[d];
            for (int64_t d = half; d < D; d++) y[d] = x[d] * c[d] + x[d - half] * s[d];
            if (h < H) continue;
            float *kd = k_cache + (h - H) * kc_h + slot * kc_s;
            for (int64_t d = 0; d < D; d++) kd[d] = y[d];
            if (dest >= 0) {
                float *kt = k_t + dest * ck_row + (h - H) * ck_head + pos;
                for (int64_t d = 0; d < D; d++) kt[d * ck_d] = y[d];
            }
        }
        for (int64_t h = 0; h < kv; h++) {
            const float *x = row + (H + kv + h) * D;
            float *vd = v_cache + h * vc_h + slot * vc_s;
            for (int64_t d = 0; d < D; d++) vd[d] = x[d];
            if (dest >= 0) {
                float *vt = v_t + dest * cv_row + h * cv_head + pos * cv_j;
                for (int64_t d = 0; d < D; d++) vt[d] = x[d];
            }
        }
    }
}

/* The int8 cache's write of one layer's keys or values (kv_quant.quantize's arithmetic: scale =
 * max |x| over the head's D values / 127, floored at FLT_MIN; q = round half to even of
 * x / scale, within +-127): token i's kv heads to the paged cache at slots[i] and, where
 * dest_rows[i] >= 0, to that DecodeCache row at position dest_pos[i]. Strides in elements:
 *   x       token i, head h, element d at x + h * x_h + i * x_tok + d
 *   cache   h * c_h + slot * c_s + d, its scale at scales + h * s_h + slot
 *   rows    row * r_row + h * r_h + pos * r_pos + d * r_d (keys transposed: r_pos 1, r_d the
 *           capacity; values: r_pos D, r_d 1), its scale at row_scales + row * rs_row + h * rs_h + pos */
void quantize_write(const float *x, int64_t x_h, int64_t x_tok, int64_t tokens, int64_t kv, int64_t D,
                    const int64_t *slots, int8_t *cache, int64_t c_h, int64_t c_s, float *scales, int64_t s_h,
                    const int64_t *dest_rows, const int64_t *dest_pos, int8_t *rows, int64_t r_row, int64_t r_h,
                    int64_t r_pos, int64_t r_d, float *row_scales, int64_t rs_row, int64_t rs_h) {
    int8_t q[D];
    for (int64_t i = 0; i < tokens; i++) {
        const int64_t slot = slots[i], dest = dest_rows ? dest_rows[i] : -1, pos = dest_rows ? dest_pos[i] : 0;
        for (int64_t h = 0; h < kv; h++) {
            const float *xs = x + h * x_h + i * x_tok;
            float amax = 0.0f;
            for (int64_t d = 0; d < D; d++) amax = fmaxf(amax, fabsf(xs[d]));
            float scale = amax / 127.0f;
            if (!(scale >= FLT_MIN)) scale = FLT_MIN;
            for (int64_t d = 0; d < D; d++) {
                float r = nearbyintf(xs[d] / scale);
                q[d] = (int8_t)(r > 127.0f ? 127.0f : r < -127.0f ? -127.0f : r);
            }
            int8_t *cd = cache + h * c_h + slot * c_s;
            for (int64_t d = 0; d < D; d++) cd[d] = q[d];
            scales[h * s_h + slot] = scale;
            if (dest >= 0) {
                int8_t *rd = rows + dest * r_row + h * r_h + pos * r_pos;
                for (int64_t d = 0; d < D; d++) rd[d * r_d] = q[d];
                row_scales[dest * rs_row + h * rs_h + pos] = scale;
            }
        }
    }
}
