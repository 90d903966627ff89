/* Instructions of your own made at run time (mma_golden_from_spec): a spec in golden.custom's grammar,
 * "k=16,a=e4m3,c=f32,base=FDA,F=25,e_zero=-133,...", read with the tables golden.c_library writes from
 * golden's own (golden_runtime.inc: golden.params.FIELDS, the algorithm descriptors, every format's row),
 * checked, and made into a design for the same row kernels as the catalog's: the format rows and table
 * layout of golden.kernels.spec.build, the parameter vector of spec.param_vector with the C library's
 * slots (golden.c_library.build_design), the product order of golden.datapath.pass_order.
 *
 * What is checked: each field on its own (golden.params.check_value), what the algorithm needs and
 * reads (Params.__post_init__, check_unused), the ranges golden.params.check_params_for sets, and what
 * the C kernels model (golden.c_library.supports).  A spec golden refuses is refused here too (the
 * tests hold the two to the same answers on a list of specs); the messages are this file's own. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "common.h"

typedef struct {
    const char *name;
    int kind;                  /* GR_KIND_* */
    int64_t low;               /* smallest int (INT64_MIN: any) */
    int none;                  /* None allowed */
    const char *extra;         /* a word an int field takes ("exact"), or NULL */
    const char *words;         /* a word or algorithm field's words, '|'-separated */
    int64_t codes[8];          /* what the kernels take for each word */
    int dnone;                 /* the default is None */
    int64_t dval;              /* else the default (a word's code) */
} gr_field;
typedef struct { int field; int64_t value; } gr_pair;
typedef struct {
    const char *name;
    int code, chained, exact_F, lowering;
    int64_t reads, needs;      /* bit i: field i */
    gr_pair describes[4];      /* values of fields it does not read that say what it does anyway */
    int int_bits, per_group, plus;   /* exact sums: L // (group or 1) + plus terms of int_bits bits */
} gr_algorithm;
typedef struct {
    const char *name;
    int storage_bits, itemsize, decodable, plain, scale;
    int64_t row[GS_FORMAT_COLUMNS];
} gr_format;

#include "golden_runtime.inc"

#define EXACT_BITS 53
#define E_ZERO_MAX 1023

typedef struct { int set, none, extra; int64_t v; } gr_value;   /* v: int, 0/1, word code, format/algorithm index */

typedef struct {
    gr_value f[GR_NFIELDS];
    int64_t k, m, n, block;
    int fmt[5];                /* a, b, c, d, scale format indices (scale -1: unscaled) */
} gr_spec;

static int word_index(const char *words, const char *w)
{
    size_t n = strlen(w);
    int i = 0;
    const char *p = words;
    if (n == 0)
        return -1;
    while (*p) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, w, n) == 0)
            return i;
        i++;
        if (!bar)
            break;
        p = bar + 1;
    }
    return -1;
}

static int format_index(const char *name)
{
    int i;
    for (i = 0; i < GR_NFORMATS; i++)
        if (strcmp(GR_FORMATS[i].name, name) == 0)
            return i;
    return -1;
}

static int parse_int(const char *s, int64_t *out)
{
    char *end;
    long long v;
    if (*s == 0)
        return -1;
    v = strtoll(s, &end, 0);
    if (*end != 0)
        return -1;
    *out = (int64_t)v;
    return 0;
}

static void lower(const char *s, char *out, size_t size)
{
    size_t n = 0;
    for (; *s && n + 1 < size; s++)
        out[n++] = (char)tolower((unsigned char)*s);
    out[n] = 0;
}

/* a Params field's value from its text (golden.params._typed) */
static int field_value(int i, const char *text, gr_value *out)
{
    const gr_field *f = &GR_FIELDS[i];
    char low[64];
    lower(text, low, sizeof low);
    out->set = 1;
    if (f->none && strcmp(low, "none") == 0)
        return out->none = 1, 0;
    if (f->extra && strcmp(low, f->extra) == 0)
        return out->extra = 1, 0;
    if (f->kind == GR_KIND_BOOL) {
        if (!strcmp(low, "true") || !strcmp(low, "yes") || !strcmp(low, "on") || !strcmp(low, "1"))
            return out->v = 1, 0;
        if (!strcmp(low, "false") || !strcmp(low, "no") || !strcmp(low, "off") || !strcmp(low, "0"))
            return out->v = 0, 0;
        return gc_fail("Params.%s=%s is not valid; valid: true or false", f->name, text);
    }
    if (f->kind == GR_KIND_INT) {
        if (parse_int(text, &out->v) || (f->low != INT64_MIN && out->v < f->low)) {
            if (f->low != INT64_MIN)
                return gc_fail("Params.%s=%s is not valid; valid: an integer >= %lld%s%s", f->name, text,
                               (long long)f->low, f->extra ? " or 'exact'" : "", f->none ? " or None" : "");
            return gc_fail("Params.%s=%s is not valid; valid: an integer%s", f->name, text, f->none ? " or None" : "");
        }
        return 0;
    }
    if (f->kind == GR_KIND_FORMAT) {
        out->v = format_index(text);
        return out->v < 0 ? gc_fail("Params.%s=%s is not a format golden knows", f->name, text) : 0;
    }
    {
        int w = word_index(f->words, text);
        if (w < 0)
            return gc_fail("Params.%s=%s is not valid; valid: one of %s", f->name, text, f->words);
        out->v = f->codes[w];
    }
    return 0;
}

static int shape_value(int i, const char *text, gr_spec *s)
{
    const char *name = GR_SHAPE_FIELDS[i];
    int64_t v;
    if (i == GR_S_M || i == GR_S_N || i == GR_S_K || i == GR_S_BLOCK) {
        if (parse_int(text, &v) || v < 1)
            return gc_fail("custom instruction: %s=%s; valid: a positive integer", name, text);
        *(i == GR_S_M ? &s->m : i == GR_S_N ? &s->n : i == GR_S_K ? &s->k : &s->block) = v;
        return 0;
    }
    v = format_index(text);
    if (v < 0)
        return gc_fail("custom instruction: %s=%s is not a format golden knows", name, text);
    s->fmt[i == GR_S_A ? 0 : i == GR_S_B ? 1 : i == GR_S_C ? 2 : i == GR_S_D ? 3 : 4] = (int)v;
    return 0;
}

/* the spec's items into s: FIELD=VALUE, each field once (golden.custom.parse, golden.params.parse_params) */
static int parse(const char *text, gr_spec *s)
{
    char item[256];
    int shape_seen[GR_NSHAPE] = {0}, i;
    const char *p = text;
    memset(s, 0, sizeof *s);
    s->fmt[0] = s->fmt[1] = s->fmt[2] = s->fmt[3] = s->fmt[4] = -1;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char *name, *value, *eq, *end;
        if (len >= sizeof item)
            return gc_fail("custom instruction: an item of %lu characters; at most %lu", (unsigned long)len,
                           (unsigned long)sizeof item - 1);
        memcpy(item, p, len);
        item[len] = 0;
        p = comma ? comma + 1 : p + len;
        for (name = item; isspace((unsigned char)*name); name++)
            ;
        if (*name == 0)
            continue;
        eq = strchr(name, '=');
        if (eq == NULL)
            return gc_fail("custom instruction: item '%s' is not FIELD=VALUE (e.g. F=24,out_rounding=RNE)", name);
        *eq = 0;
        for (value = eq + 1; isspace((unsigned char)*value); value++)
            ;
        for (end = eq; end > name && isspace((unsigned char)end[-1]); end--)
            ;
        *end = 0;
        for (end = value + strlen(value); end > value && isspace((unsigned char)end[-1]); end--)
            ;
        *end = 0;
        if (*name == 0 || *value == 0)
            return gc_fail("custom instruction: item '%s=%s' is not FIELD=VALUE", name, value);
        for (i = 0; i < GR_NSHAPE && strcmp(GR_SHAPE_FIELDS[i], name) != 0; i++)
            ;
        if (i < GR_NSHAPE) {
            if (shape_seen[i]++)
                return gc_fail("custom instruction: '%s' given twice in '%s'", name, text);
            if (shape_value(i, value, s))
                return -1;
            continue;
        }
        for (i = 0; i < GR_NFIELDS && strcmp(GR_FIELDS[i].name, name) != 0; i++)
            ;
        if (i == GR_NFIELDS)
            return gc_fail("'%s' is not a golden.Params field nor a shape or format field (k, m, n, a, b, c, d, "
                           "scale, block)", name);
        if (s->f[i].set)
            return gc_fail("params field '%s' given twice in '%s'", name, text);
        if (field_value(i, value, &s->f[i]))
            return -1;
    }
    if (!shape_seen[GR_S_K] || s->fmt[0] < 0 || s->fmt[2] < 0)
        return gc_fail("custom instruction '%s': k, a and c are needed; a spec is k=K,a=FMT,[b=FMT,]c=FMT,"
                       "[d=FMT,][scale=FMT,block=N,][m=M,n=N,]base=ALG,FIELD=VALUE,...", text);
    if (!s->f[GR_F_BASE].set)
        return gc_fail("custom instruction '%s': base is missing (the algorithm: %s)", text,
                       GR_FIELDS[GR_F_BASE].words);
    if (!shape_seen[GR_S_M])
        s->m = 1;
    if (!shape_seen[GR_S_N])
        s->n = 1;
    if (s->fmt[1] < 0)
        s->fmt[1] = s->fmt[0];
    if (s->fmt[3] < 0)
        s->fmt[3] = s->fmt[2];
    if ((s->fmt[4] < 0) != !shape_seen[GR_S_BLOCK])
        return gc_fail("custom instruction: scale and block go together (a block-scale format and the products "
                       "each scale covers)");
    if (s->fmt[4] >= 0 && !GR_FORMATS[s->fmt[4]].scale)
        return gc_fail("custom instruction: scale=%s is not a block-scale format", GR_FORMATS[s->fmt[4]].name);
    if (s->fmt[4] >= 0 && s->k % s->block)
        return gc_fail("custom instruction: block=%lld; valid: a positive divisor of k=%lld", (long long)s->block,
                       (long long)s->k);
    for (i = 0; i < GR_NFIELDS; i++)          /* the defaults of the fields not given */
        if (!s->f[i].set) {
            s->f[i].none = GR_FIELDS[i].dnone;
            s->f[i].v = GR_FIELDS[i].dval;
        }
    return 0;
}

#define F(s, name) ((s)->f[GR_F_##name])
#define ROW(i) (GR_FORMATS[i].row)
#define IS(i, fname) ((i) >= 0 && strcmp(GR_FORMATS[i].name, (fname)) == 0)

static int differs_from_default(const gr_value *v, int i)
{
    const gr_field *f = &GR_FIELDS[i];
    if (v->extra)
        return 1;
    if (v->none || f->dnone)
        return v->none != f->dnone;
    return v->v != f->dval;
}

static int64_t bit_len(int64_t x)
{
    int64_t n = 0;
    for (; x > 0; x >>= 1)
        n++;
    return n;
}

/* the algorithm's own rules: what it needs, what it reads (golden.Params, golden.params.check_unused) */
static int check_params(gr_spec *s, const gr_algorithm *alg)
{
    int i, j;
    for (i = 0; i < GR_NFIELDS; i++) {
        if ((alg->needs >> i & 1) && F(s, BASE).v >= 0 && s->f[i].none && !s->f[i].extra)
            return gc_fail("%s needs %s", alg->name, GR_FIELDS[i].name);
    }
    if (F(s, F).extra && !alg->exact_F)
        return gc_fail("F='exact' (the exact sum, rounded once) is an FDA design, not %s", alg->name);
    if ((!F(s, OPERAND_FORMAT).none || !F(s, PASS_INTERLEAVE).none || F(s, C_LAST).v) && !alg->lowering)
        return gc_fail("operand_format, pass_interleave and c_last describe a compiled FDA path, not %s", alg->name);
    for (i = 1; i < GR_NFIELDS; i++) {
        int described = 0;
        if ((alg->reads >> i & 1) || !differs_from_default(&s->f[i], i))
            continue;
        for (j = 0; j < 4; j++)
            described |= alg->describes[j].field == i && alg->describes[j].value == s->f[i].v;
        if (!described)
            return gc_fail("Params.%s is not valid for this design: %s does not read it, so it would change "
                           "nothing; valid: its default", GR_FIELDS[i].name, alg->name);
    }
    if (alg->chained && F(s, PASS_SIZE).none) {        /* one pass of all k products (golden.custom.custom) */
        F(s, PASS_SIZE).none = 0;
        F(s, PASS_SIZE).v = s->k;
    }
    if (!F(s, PASS_INTERLEAVE).none && (F(s, PASS_SIZE).none || F(s, PASS_SIZE).v % F(s, PASS_INTERLEAVE).v))
        return gc_fail("pass_interleave must divide the pass size L");
    return 0;
}

/* every pattern of format fa converts exactly to fo (spec._lowering_ok, algorithms.convert_exactly) */
static int lowers_exactly(int fa, int fo)
{
    const int64_t *ra = ROW(fa), *ro = ROW(fo);
    int64_t j, n = INT64_C(1) << ra[GS_VALUE_BITS];
    if (ra[GS_VALUE_BITS] > 16 || ro[GS_VALUE_BITS] > 16)
        return 0;
    for (j = 0; j < n; j++) {
        double v, w;
        int64_t e;
        fields_value_exp(ra, 0, (uint64_t)j << ra[GS_IGNORED_LOW], &v, &e);
        fields_value_exp(ro, 0, round_f64(ro, 0, v, GS_RNE), &w, &e);
        if (!(isnan(v) || v == w))
            return 0;
    }
    return 1;
}

static int is_nan_of(int fd, int64_t bits)
{
    const gr_format *f = &GR_FORMATS[fd];
    int64_t fmts[GS_SLOTS * GS_FORMAT_COLUMNS];
    double v;
    int64_t e;
    if (f->row[GS_NAN_KIND] == GS_NAN_NONE || (f->storage_bits < 64 && bits >> f->storage_bits))
        return 0;
    memcpy(fmts, f->row, sizeof f->row);
    fmts[GS_TABLE_OFF] = -1;
    value_exp(fmts, NULL, NULL, 0, (uint64_t)bits, &v, &e);
    return isnan(v);
}

static int not_modelled(const char *what)
{
    return gc_fail("no C kernel models this design (golden.c_library.supports is false): %s", what);
}

/* the ranges of golden.params.check_params_for and what the C kernels model (golden.c_library.supports) */
static int check_design(gr_spec *s, const gr_algorithm *alg)
{
    int fa = s->fmt[0], fb = s->fmt[1], fc = s->fmt[2], fd = s->fmt[3], fs = s->fmt[4];
    int64_t k = s->k, L = alg->chained && !F(s, PASS_SIZE).none ? F(s, PASS_SIZE).v : k, g;
    if (!GR_FORMATS[fa].decodable || !GR_FORMATS[fb].decodable || !GR_FORMATS[fc].decodable)
        return not_modelled("an operand format the kernels do not decode");
    if (!F(s, NAN_BITS).none && !is_nan_of(fd, F(s, NAN_BITS).v))
        return gc_fail("Params.nan_bits=0x%llx is not a NaN of the output format %s",
                       (unsigned long long)F(s, NAN_BITS).v, GR_FORMATS[fd].name);
    if (alg->code == GS_KERNEL_SFMA) {
        if (!(IS(fd, "f32") || IS(fd, "f64")) || fa != fd || fb != fd || fc != fd)
            return gc_fail("SFMA runs IEEE fused multiply-adds in one format, f32 or f64, for a, b, c and d");
        if (F(s, FMA_ROUNDING).v != GR_W_FMA_ROUNDING_RNE && !IS(fd, "f32"))
            return gc_fail("Params.fma_rounding: SFMA rounds %s to nearest even only", GR_FORMATS[fd].name);
        return 0;
    }
    if (alg->code == GS_KERNEL_GPS) {
        g = F(s, GROUP).v;
        if (g != 1 && g != 2 && g != 4 && g != 8 && g != 16)
            return gc_fail("GPS needs group G, a power of two up to 16");
        if (!IS(fc, "f32") || !IS(fd, "f32"))
            return gc_fail("GPS accumulates in f32 (c and d f32)");
        if (ROW(fa)[GS_NAN_KIND] != GS_NAN_IEEE || ROW(fb)[GS_NAN_KIND] != GS_NAN_IEEE || !ROW(fa)[GS_SUBNORMALS]
                || !ROW(fb)[GS_SUBNORMALS] || ROW(fa)[GS_VALUE_BITS] > 16 || ROW(fb)[GS_VALUE_BITS] > 16)
            return gc_fail("GPS takes IEEE-style operands with subnormals of at most 16 bits (f16, bf16)");
        if (fs >= 0 || k % g)
            return not_modelled("GPS with block scales, or k not a multiple of the group");
        return 0;
    }
    if (k % L)
        return gc_fail("Params.pass_size=%lld is not valid: K=%lld is not a multiple of the pass size",
                       (long long)L, (long long)k);
    if (fs >= 0 && L % s->block)
        return gc_fail("Params.pass_size=%lld is not valid: a multiple of the block size %lld", (long long)L,
                       (long long)s->block);
    if (!GR_FORMATS[fd].plain || ROW(fd)[GS_VALUE_BITS] > 32)
        return not_modelled("a result format other than f32, f16 or bf16");
    if (fs >= 0 && (ROW(fs)[GS_VALUE_BITS] > 16 || !F(s, PASS_INTERLEAVE).none))
        return not_modelled("block scales with interleaved passes");
    if (!F(s, OPERAND_FORMAT).none && !(lowers_exactly(fa, (int)F(s, OPERAND_FORMAT).v)
                                        && lowers_exactly(fb, (int)F(s, OPERAND_FORMAT).v)))
        return gc_fail("Params.operand_format=%s: a format that holds every %s value exactly, or None",
                       GR_FORMATS[F(s, OPERAND_FORMAT).v].name, GR_FORMATS[fa].name);
    {
        int xa = F(s, OPERAND_FORMAT).none ? fa : (int)F(s, OPERAND_FORMAT).v;
        int xb = F(s, OPERAND_FORMAT).none ? fb : (int)F(s, OPERAND_FORMAT).v;
        if (ROW(xa)[GS_MAN_BITS] + ROW(xb)[GS_MAN_BITS] + 2 > EXACT_BITS)
            return gc_fail("%s forms exact products, and these need more than %d bits", alg->name, EXACT_BITS);
    }
    if (F(s, C_LAST).v && (fc != fd || !(IS(fd, "f16") || IS(fd, "f32"))))
        return gc_fail("Params.c_last: c_last adds c in the result format, f16 or f32 (c and d the same)");
    if (!F(s, OUT_FRAC_BITS).none && F(s, OUT_FRAC_BITS).v > ROW(fd)[GS_MAN_BITS])
        return gc_fail("Params.out_frac_bits=%lld; valid: 1..%lld or None", (long long)F(s, OUT_FRAC_BITS).v,
                       (long long)ROW(fd)[GS_MAN_BITS]);
    if (alg->code == GS_KERNEL_GDFS) {
        g = F(s, GROUP).none ? 16 : F(s, GROUP).v;
        if (fs < 0)
            return gc_fail("GDFS needs block scales (a scale format and block size)");
        if (L % g || s->block % g)
            return gc_fail("Params.group=%lld; valid: a divisor of the pass K=%lld and of the block size %lld",
                           (long long)g, (long long)L, (long long)s->block);
    }
    if (!F(s, F).extra) {
        int64_t grp = F(s, GROUP).none ? 16 : F(s, GROUP).v;
        int64_t terms = L / (alg->per_group ? grp : 1) + alg->plus;
        int64_t top = EXACT_BITS - alg->int_bits - bit_len(terms);
        if (F(s, F).v > top)
            return gc_fail("Params.F=%lld; valid: 0..%lld%s (sums of %lld-product passes exact in float64)",
                           (long long)F(s, F).v, (long long)top, alg->exact_F ? " or 'exact'" : "", (long long)L);
    }
    if ((alg->reads >> GR_F_E_ZERO & 1) && !F(s, E_ZERO).none) {
        int64_t low = F(s, F).extra ? -E_ZERO_MAX : (F(s, F).v - E_ZERO_MAX > -E_ZERO_MAX ? F(s, F).v - E_ZERO_MAX
                                                                                         : -E_ZERO_MAX);
        if (F(s, E_ZERO).v < low || F(s, E_ZERO).v > E_ZERO_MAX)
            return gc_fail("Params.e_zero=%lld; valid: %lld..%d", (long long)F(s, E_ZERO).v, (long long)low,
                           E_ZERO_MAX);
    }
    if (alg->reads >> GR_F_DOT_FLOOR_BITS & 1) {
        int64_t top = EXACT_BITS - 2 - bit_len(L + 1);
        if (((alg->reads >> GR_F_MERGE_FLOOR_BITS & 1) && F(s, MERGE_FLOOR_BITS).v > top)
                || F(s, DOT_FLOOR_BITS).v > top || F(s, C_FLOOR_BITS).v > F(s, DOT_FLOOR_BITS).v
                || F(s, FINAL_FLOOR_BITS).v > EXACT_BITS - 2)
            return gc_fail("the floor bits: merge_floor_bits and dot_floor_bits at most %lld, c_floor_bits at most "
                           "dot_floor_bits, final_floor_bits at most %d", (long long)top, EXACT_BITS - 2);
    }
    return 0;
}

/* ---------------------------------------------------------------------------- the design */

/* spec.param_vector and the C library's slots (golden.c_library.build_design) */
static void param_vector(const gr_spec *s, const gr_algorithm *alg, int64_t *prm)
{
    int64_t k = s->k;
    memset(prm, 0, GS_C_NPARAMS * sizeof *prm);
    prm[GS_P_F] = F(s, F).none || F(s, F).extra ? 0 : F(s, F).v;
    prm[GS_P_EZERO] = F(s, E_ZERO).none ? 0 : F(s, E_ZERO).v;
    prm[GS_P_L] = alg->chained && !F(s, PASS_SIZE).none ? F(s, PASS_SIZE).v : k;
    prm[GS_P_MODE] = F(s, OUT_ROUNDING).v;
    prm[GS_P_FRAC] = F(s, OUT_FRAC_BITS).none ? -1 : F(s, OUT_FRAC_BITS).v;
    prm[GS_P_OVERFLOW] = F(s, OVERFLOW).v;
    prm[GS_P_ZPOS] = F(s, ZERO_SIGN).v == GR_W_ZERO_SIGN_POSITIVE;
    prm[GS_P_GROUP] = F(s, GROUP).none || F(s, GROUP).v == 0 ? 16 : F(s, GROUP).v;
    prm[GS_P_DOTFB] = F(s, DOT_FLOOR_BITS).v;
    prm[GS_P_CFB] = F(s, C_FLOOR_BITS).v;
    prm[GS_P_FINFB] = F(s, FINAL_FLOOR_BITS).v;
    prm[GS_P_MERGEFB] = F(s, MERGE_FLOOR_BITS).v;
    prm[GS_P_FLOOR_RD] = F(s, FLOOR_ROUNDING).v == GR_W_FLOOR_ROUNDING_RD;
    prm[GS_P_CDROP] = F(s, C_DROP).none ? GS_NO_C_DROP : F(s, C_DROP).v;
    prm[GS_P_PROD_OVER] = F(s, PRODUCT_OVERFLOW).v;
    prm[GS_P_LATER] = F(s, SPECIALS).v == GR_W_SPECIALS_LATER_MODEL;
    prm[GS_P_CLAST] = F(s, C_LAST).v;
    prm[GS_P_INTERLEAVED] = !F(s, PASS_INTERLEAVE).none;
    prm[GS_P_BLOCK] = s->fmt[4] >= 0 ? s->block : 1;
    prm[GS_P_SCALED] = s->fmt[4] >= 0;
    prm[GS_P_FLUSH] = F(s, FLUSH_SUBNORMALS).v;
    prm[GS_P_BASE] = alg->code;
    prm[GS_P_FAST] = 0;                           /* not read by the C kernels */
    prm[GS_P_EXACT] = F(s, F).extra;
    prm[GS_P_NAN_SET] = !F(s, NAN_BITS).none;
    prm[GS_P_NAN_BITS] = F(s, NAN_BITS).none ? 0 : F(s, NAN_BITS).v;
    prm[GS_P_FMA_MODE] = F(s, FMA_ROUNDING).v;
    prm[GS_P_ZERO_754] = F(s, ZERO_SIGN).v == GR_W_ZERO_SIGN_IEEE754;
}

/* spec.build's format rows and table layout: formats of at most TABLE_BITS value bits (or lowered a and
 * b) tabled, one table per (format, lowered format), a and b sharing theirs */
static int layout(const gr_spec *s, gc_design *d, gc_fill *fills, int64_t *size)
{
    int slot, n = 0, keys[GS_SLOTS][2];
    int64_t offs[GS_SLOTS], off = 0;
    int low = F(s, OPERAND_FORMAT).none ? -1 : (int)F(s, OPERAND_FORMAT).v;
    for (slot = 0; slot < GS_SLOTS; slot++) {
        int f = slot == GS_S ? (s->fmt[4] >= 0 ? s->fmt[4] : s->fmt[3]) : s->fmt[slot];
        int lo = slot == GS_A || slot == GS_B ? low : -1;
        int64_t *row = &d->fmts[slot * GS_FORMAT_COLUMNS], at = -1;
        int i;
        memcpy(row, ROW(f), GS_FORMAT_COLUMNS * sizeof *row);
        if (ROW(f)[GS_VALUE_BITS] <= GS_TABLE_BITS || lo >= 0) {
            for (i = 0; i < n; i++)
                if (keys[i][0] == f && keys[i][1] == lo)
                    at = offs[i];
            if (at < 0) {
                keys[n][0] = f, keys[n][1] = lo, offs[n] = at = off;
                fills[n].off = off, fills[n].len = INT64_C(1) << ROW(f)[GS_VALUE_BITS];
                fills[n].row = ROW(f), fills[n].low = lo >= 0 ? ROW(lo) : NULL;
                off += fills[n].len;
                n++;
            }
        }
        row[GS_TABLE_OFF] = row[GS_EXP_TAB_OFF] = at;
    }
    *size = off;
    return n;
}

const mma_golden_instr *mma_golden_from_spec(const char *text)
{
    gr_spec s;
    const gr_algorithm *alg;
    struct gc_own *own;
    mma_golden_instr *x;
    gc_fill fills[GS_SLOTS];
    int64_t size, L, j, t, passes, run;
    int nfill, i;
    gc_clear_error();
    if (text == NULL)
        return (const mma_golden_instr *)(gc_fail("mma_golden_from_spec: a spec is required"), NULL);
    if (parse(text, &s))
        return NULL;
    alg = &GR_ALGS[F(&s, BASE).v];
    if (check_params(&s, alg) || check_design(&s, alg))
        return NULL;
    own = calloc(1, sizeof *own + strlen(text) + 16);
    x = calloc(1, sizeof *x);
    if (own == NULL || x == NULL || (own->order = malloc((size_t)s.k * sizeof *own->order)) == NULL) {
        free(own), free(x);
        return (const mma_golden_instr *)(gc_fail("out of memory"), NULL);
    }
    param_vector(&s, alg, own->design.prm);
    nfill = layout(&s, &own->design, fills, &size);
    own->tables = gc_fill_tables(fills, nfill, size);
    if (own->tables == NULL) {
        free(own->order), free(own), free(x);
        return (const mma_golden_instr *)(gc_fail("out of memory building the value tables"), NULL);
    }
    own->design.code = alg->code, own->design.k = (int)s.k, own->design.layout = -1, own->design.order = -1;
    L = own->design.prm[GS_P_L];
    passes = s.k / L;
    run = F(&s, PASS_INTERLEAVE).none ? L : F(&s, PASS_INTERLEAVE).v;
    for (j = 0, i = 0; j < passes; j++)           /* golden.datapath.pass_order (runs of L: 0 .. k-1) */
        for (t = 0; t < s.k; t++)
            if ((t / run) % passes == j)
                own->order[i++] = t;
    strcpy(own->text, text);
    sprintf(own->text + strlen(text) + 1, "%s%s", alg->chained && s.k > L ? "Co" : "", alg->name);
    own->entry.arch = "custom";
    own->entry.name = own->entry.names = own->text;
    own->entry.algorithm = own->text + strlen(text) + 1;
    own->entry.k = (int)s.k, own->entry.block = s.fmt[4] >= 0 ? (int)s.block : 0;
    own->entry.d_bytes = GR_FORMATS[s.fmt[3]].itemsize;
    for (i = 0; i < 5; i++) {
        own->entry.formats[i] = s.fmt[i] >= 0 ? GR_FORMATS[s.fmt[i]].name : NULL;
        own->entry.bits[i] = s.fmt[i] >= 0 ? GR_FORMATS[s.fmt[i]].storage_bits : 0;
    }
    x->e = &own->entry, x->d = &own->design, x->m = (int)s.m, x->n = (int)s.n, x->own = own;
    return x;
}

void mma_golden_free(const mma_golden_instr *x)
{
    struct gc_own *own;
    if (x == NULL || x->own == NULL)             /* a catalog instruction: nothing to free */
        return;
    own = (struct gc_own *)x->own;
    gc_free_tables(own->tables);
    free(own->order);
    free(own);
    free((mma_golden_instr *)x);
}
