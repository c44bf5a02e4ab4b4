/*
 * hcp - hierarchical context parallelism toolkit: the stable C ABI.
 *
 * Conventions (every function follows them):
 * - Functions return hcp_status; HCP_OK is 0. Codes are pinned and never reused. On failure a message naming the
 *   function, the argument or input position and the violated rule is available from hcp_last_error() on the same
 *   thread; successful calls leave it unchanged.
 * - Output parameters come first. A NULL pointer where one is required gives HCP_ERR_INVALID_ARGUMENT, never a
 *   crash. No C++ exception ever leaves the library.
 * - Structs that may grow start with `size_t struct_size`. Set it with the struct's _INIT macro (C, C++) or its
 *   hcp_<struct>_init(&s, sizeof s) function (any language; a struct zeroed by hand with struct_size set works too:
 *   zero means "the default" in every optional field). The library reads (or, for output structs, writes) only the
 *   fields that struct_size covers and defaults the rest. struct_size must be one of the struct's versions, listed
 *   at each struct: each ends at a field boundary, so a size inside a field gives HCP_ERR_INVALID_ARGUMENT. A size
 *   larger than the library knows (a newer header) is accepted when it is a multiple of 8 and every unknown byte is
 *   zero (HCP_ERR_UNSUPPORTED otherwise). Fields named reserved* fill what would be padding so that later versions
 *   can use them: they must be zero (HCP_ERR_INVALID_ARGUMENT otherwise).
 * - Enumerations are passed and stored as fixed-width integers (hcp_status, hcp_order, ... are int32_t typedefs;
 *   the named constants are the enumerators); an unknown value gives HCP_ERR_INVALID_ARGUMENT.
 * - hcp_<struct>_init(&s, struct_size) fills every field that struct_size covers with the defaults of the _INIT
 *   macro and sets struct_size; a size that is not one of the struct's versions gives HCP_ERR_INVALID_ARGUMENT.
 * - Handles are opaque, made by _create(&out, ...) and released by _destroy(h), which accepts NULL.
 * - Ownership, once for all: memory the library returns through a `char**` (rendered text, JSON, messages) belongs
 *   to the caller and is released with hcp_free(); `const char*` results and strings inside output structs
 *   belong to the library (static storage, or the handle they came from, as each function says); handles returned
 *   through `**out` belong to the caller (release with their _destroy), except those documented as borrowed.
 * - Errors survive thread hops: a failed call that takes a handle also leaves its message on that handle, read
 *   with hcp_<handle>_last_error() from any thread (for FFIs that run each call on a worker thread).
 */
#ifndef HCP_HCP_H
#define HCP_HCP_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define HCP_API __attribute__((visibility("default")))
#else
#define HCP_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ------------------------------------------------------------------------------------------------- */

#define HCP_VERSION_MAJOR 0
#define HCP_VERSION_MINOR 7
#define HCP_VERSION_PATCH 0
#define HCP_VERSION_NUMBER (HCP_VERSION_MAJOR * 10000 + HCP_VERSION_MINOR * 100 + HCP_VERSION_PATCH)
/* Spelled from the three numbers above, so that it cannot drift from them (it said 0.1.0 until 0.4). */
#define HCP_VERSION_STR_(x) #x
#define HCP_VERSION_STR(x) HCP_VERSION_STR_(x)
#define HCP_VERSION_STRING \
  HCP_VERSION_STR(HCP_VERSION_MAJOR) "." HCP_VERSION_STR(HCP_VERSION_MINOR) "." HCP_VERSION_STR(HCP_VERSION_PATCH)

/* The version of the library actually loaded (compare with HCP_VERSION_NUMBER of the header). Since 0.1. */
HCP_API unsigned hcp_version_number(void);
/* "MAJOR.MINOR.PATCH"; static storage. Since 0.1. */
HCP_API const char* hcp_version_string(void);

/* ---- status and errors --------------------------------------------------------------------------------------- */

typedef int32_t hcp_status;
enum hcp_status_code {
  HCP_OK = 0,
  HCP_ERR_INVALID_ARGUMENT = 1, /* NULL pointer, unknown enum value, struct_size too small, out-of-range rank */
  HCP_ERR_INVALID_CONFIG = 2,   /* the parallel configuration violates an upstream condition */
  HCP_ERR_BUFFER_TOO_SMALL = 3, /* a caller buffer is too short; the needed size was written */
  HCP_ERR_OUT_OF_MEMORY = 4,
  HCP_ERR_IO = 5,               /* a file could not be opened or read */
  HCP_ERR_PARSE = 6,            /* an input could not be parsed */
  HCP_ERR_UNSUPPORTED = 7,      /* not available in this build, or unknown non-zero struct fields */
  HCP_ERR_COMM = 8,             /* a communicator operation failed */
  HCP_ERR_TIMEOUT = 9,          /* a communicator operation did not complete in time */
  HCP_ERR_SHAPE = 10,           /* tensor shapes that do not divide or disagree between ranks */
  HCP_ERR_NOT_FOUND = 11,       /* a named or requested item does not exist (e.g. hcp groups without sizes) */
  HCP_ERR_INTERNAL = 12         /* a bug in hcp */
};

/* A short constant description of a status ("invalid argument"); never NULL, also for unknown values. Since 0.1. */
HCP_API const char* hcp_status_string(hcp_status status);
/* The message of the last failed call on this thread, "" if none; never NULL. Valid until the next failing call on
 * this thread. Since 0.1. */
HCP_API const char* hcp_last_error(void);
/* Releases memory returned by the library; NULL is accepted. Since 0.1. */
HCP_API void hcp_free(void* ptr);

/* The message of the last failed call that took this handle (as its first handle argument), from whichever thread
 * made it; "" when none has failed. A copy: release with hcp_free. Safe from any thread, also while other threads
 * use the handle. Since 0.5:
 *   hcp_topology_last_error, hcp_lint_report_last_error, hcp_logscan_last_error (scanner),
 *   hcp_logscan_report_last_error, hcp_world_last_error, hcp_comm_last_error, hcp_cp_context_last_error
 * (declared with their handles below). */

/* ---- parallel configuration ---------------------------------------------------------------------------------- */

typedef int32_t hcp_order;
enum hcp_order_value {
  HCP_ORDER_TP_CP_EP_DP_PP = 0, /* Megatron's default */
  HCP_ORDER_TP_CP_EP_PP_DP = 1  /* --use-tp-pp-dp-mapping */
};

/* Since 0.1. Required fields: struct_size through cp (world_size, tp, pp, cp >= 1); the later ones are optional, 0
 * meaning the default (ep 1, order TP_CP_EP_DP_PP, no hierarchical sizes, gpus_per_node 8). Versions: struct_size
 * at the end of cp, ep, order, num_hcp_levels, hcp_sizes or gpus_per_node (the whole struct, 72 bytes on LP64). */
typedef struct hcp_parallel_config {
  size_t struct_size;
  int64_t world_size;
  int64_t tp;
  int64_t pp;
  int64_t cp;
  int64_t ep;                /* must be 1 when cp > 1 */
  hcp_order order;
  uint32_t num_hcp_levels;   /* entries in hcp_sizes */
  const int64_t* hcp_sizes;  /* hierarchical_context_parallel_sizes; NULL = unset. Copied by _create. */
  int64_t gpus_per_node;     /* ranks per NVLink domain, for locality; 0: 8 */
} hcp_parallel_config;

#define HCP_PARALLEL_CONFIG_INIT \
  { sizeof(hcp_parallel_config), 1, 1, 1, 1, 1, HCP_ORDER_TP_CP_EP_DP_PP, 0, NULL, 8 }
HCP_API hcp_status hcp_parallel_config_init(hcp_parallel_config* config, size_t struct_size); /* since 0.5 */

/* ---- topology: the exact Megatron-Core rank layout ----------------------------------------------------------- */

typedef int32_t hcp_group_kind;
enum hcp_group_kind_value {
  HCP_GROUP_TP = 0,       /* TENSOR_MODEL_PARALLEL_GROUP */
  HCP_GROUP_CP = 1,       /* CONTEXT_PARALLEL_GROUP */
  HCP_GROUP_DP = 2,       /* DATA_PARALLEL_GROUP */
  HCP_GROUP_PP = 3,       /* PIPELINE_MODEL_PARALLEL_GROUP */
  HCP_GROUP_DP_CP = 4,    /* DATA_PARALLEL_GROUP_WITH_CP */
  HCP_GROUP_TP_CP = 5,    /* TENSOR_AND_CONTEXT_PARALLEL_GROUP */
  HCP_GROUP_MP = 6,       /* MODEL_PARALLEL_GROUP */
  HCP_GROUP_TP_DP_CP = 7, /* TENSOR_AND_DATA_PARALLEL_GROUP_WITH_CP */
  HCP_GROUP_HCP = 8       /* HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L{level} */
};

/* Immutable after creation: every query may be called from any number of threads at once. Destroy must not run
 * concurrently with a query on the same handle. */
typedef struct hcp_topology hcp_topology;

/* Validates the config and builds the layout (O(levels) memory; groups are computed on demand). Since 0.1.
 * HCP_ERR_INVALID_CONFIG names the violated condition with the values. */
HCP_API hcp_status hcp_topology_create(hcp_topology** out, const hcp_parallel_config* config);
HCP_API void hcp_topology_destroy(hcp_topology* topology);
HCP_API hcp_status hcp_topology_last_error(char** out_message, const hcp_topology* topology);

/* Data-parallel size and number of hierarchical levels (0 when unset). Since 0.1. */
HCP_API hcp_status hcp_topology_dp(int64_t* out_dp, const hcp_topology* topology);
HCP_API hcp_status hcp_topology_num_levels(int32_t* out_levels, const hcp_topology* topology);

/* Size of each group of a kind and the number of such groups. `level` is used only for HCP_GROUP_HCP. Since 0.1. */
HCP_API hcp_status hcp_topology_group_size(int64_t* out_group_size, int64_t* out_group_count,
                                           const hcp_topology* topology, hcp_group_kind kind, int32_t level);

/* A rank's coordinate along each parallel dimension. Since 0.1. */
typedef struct hcp_rank_coords {
  size_t struct_size;
  int64_t tp;
  int64_t cp;
  int64_t dp;
  int64_t pp;
} hcp_rank_coords;
#define HCP_RANK_COORDS_INIT { sizeof(hcp_rank_coords), 0, 0, 0, 0 }
HCP_API hcp_status hcp_rank_coords_init(hcp_rank_coords* coords, size_t struct_size); /* since 0.5 */
HCP_API hcp_status hcp_topology_coords(hcp_rank_coords* out, const hcp_topology* topology, int64_t rank);

/* The index of `rank`'s group in enumeration order and the rank's position inside the group, computed from its
 * coordinates in O(levels). Since 0.1. */
HCP_API hcp_status hcp_topology_membership(int64_t* out_group_index, int64_t* out_rank_in_group,
                                           const hcp_topology* topology, int64_t rank, hcp_group_kind kind,
                                           int32_t level);

/* The members of `rank`'s group, in Megatron's order, into ranks[0..capacity). *out_needed receives the group size
 * in every case; a short buffer gives HCP_ERR_BUFFER_TOO_SMALL and writes nothing to ranks. ranks may be NULL when
 * capacity is 0. Since 0.1. */
HCP_API hcp_status hcp_topology_group_of(int64_t* ranks, size_t capacity, size_t* out_needed,
                                         const hcp_topology* topology, int64_t rank, hcp_group_kind kind,
                                         int32_t level);

/* Every group of a kind in Megatron's order, flattened: world_size entries, group i at [i*size, (i+1)*size).
 * Same buffer protocol as hcp_topology_group_of. Since 0.1. */
HCP_API hcp_status hcp_topology_groups(int64_t* ranks, size_t capacity, size_t* out_needed,
                                       const hcp_topology* topology, hcp_group_kind kind, int32_t level);

/* Whether the groups of a kind stay inside one node of gpus_per_node consecutive ranks. Since 0.1. */
typedef struct hcp_locality {
  size_t struct_size;
  int64_t group_size;
  int64_t span;                  /* last member - first member + 1, in global ranks */
  int64_t groups;                /* number of groups */
  int64_t groups_crossing_nodes; /* 0 means every group is inside one node */
} hcp_locality;
#define HCP_LOCALITY_INIT { sizeof(hcp_locality), 0, 0, 0, 0 }
HCP_API hcp_status hcp_locality_init(hcp_locality* locality, size_t struct_size); /* since 0.5 */
HCP_API hcp_status hcp_topology_locality(hcp_locality* out, const hcp_topology* topology, hcp_group_kind kind,
                                         int32_t level);

/* JSON text of the whole layout (rank < 0; the keys of `hcp groups --format json`) or of one rank. NUL-terminated,
 * release with hcp_free. Since 0.1. */
HCP_API hcp_status hcp_topology_to_json(char** out_json, const hcp_topology* topology, int64_t rank);

/* The layout as one self-contained SVG picture (`hcp groups --svg`): nodes as boxes of GPUs with rank and
 * coordinates, the a2a groups and rings coloured by whether they stay in a node; at most max_nodes nodes drawn
 * (<= 0: 16; at most 4096 GPUs), the rest counted in the caption. Nodes of more than 1024 GPUs give
 * HCP_ERR_INVALID_ARGUMENT. NUL-terminated, release with hcp_free. Since 0.7. */
HCP_API hcp_status hcp_topology_to_svg(char** out_svg, const hcp_topology* topology, int64_t max_nodes);

/* ---- lint: training configs against the known context-parallel pitfalls ------------------------------------- */

typedef int32_t hcp_severity;
enum hcp_severity_value { HCP_SEVERITY_INFO = 0, HCP_SEVERITY_WARNING = 1, HCP_SEVERITY_ERROR = 2 };

/* Since 0.1. Every field after struct_size is optional: NULL / 0 means "not given". */
typedef struct hcp_lint_options {
  size_t struct_size;
  const char* input_format;      /* "auto" (NULL), "toml", "yaml", "overrides", "megatron", "python" */
  const char* const* overrides;  /* Hydra-style overrides applied on top of the input, e.g. "model.x=1" */
  size_t num_overrides;
  const char* select;            /* comma-separated rule codes or prefixes; NULL: every rule */
  const char* ignore;            /* comma-separated rule codes or prefixes */
  const char* severities;        /* "HCP011=error,HCP019=info" */
  int64_t world_size;            /* cluster facts; 0: unknown unless the input says */
  int64_t nodes;
  int64_t gpus_per_node;
  const char* te_version;        /* Transformer Engine version, e.g. "2.4.0" */
  const char* gpu;               /* GPU model, e.g. "h100" */
} hcp_lint_options;

#define HCP_LINT_OPTIONS_INIT { sizeof(hcp_lint_options), NULL, NULL, 0, NULL, NULL, NULL, 0, 0, 0, NULL, NULL }
HCP_API hcp_status hcp_lint_options_init(hcp_lint_options* options, size_t struct_size); /* since 0.5 */

/* The result of one lint call. Immutable: any number of threads may read one report at once. */
typedef struct hcp_lint_report hcp_lint_report;

/* One finding. The strings belong to the report and stay valid until it is destroyed. Since 0.1. */
typedef struct hcp_lint_diagnostic {
  size_t struct_size;
  const char* code;    /* "HCP001" */
  const char* rule;    /* "a2a-p2p-without-sizes" */
  const char* message;
  const char* hint;    /* "" when none */
  const char* file;
  int32_t line;        /* 1-based; 0 when the finding has no line */
  int32_t col;
  hcp_severity severity;
  int32_t reserved0;   /* written as 0 */
} hcp_lint_diagnostic;
#define HCP_LINT_DIAGNOSTIC_INIT { sizeof(hcp_lint_diagnostic), NULL, NULL, NULL, NULL, NULL, 0, 0, 0, 0 }
HCP_API hcp_status hcp_lint_diagnostic_init(hcp_lint_diagnostic* diagnostic, size_t struct_size); /* since 0.5 */

/* Lints one file (TOML, YAML, overrides or a Megatron-LM launch script; detected from extension and content unless
 * options->input_format says). options may be NULL. An input that cannot be read gives HCP_ERR_IO, one that cannot
 * be parsed HCP_ERR_PARSE, both with "path:line:col: ..." in hcp_last_error(); findings are not errors. Since 0.1. */
HCP_API hcp_status hcp_lint_file(hcp_lint_report** out, const char* path, const hcp_lint_options* options);
/* Lints a text buffer of `length` bytes; `name` (NULL: "<text>") is used in locations and for format detection. */
HCP_API hcp_status hcp_lint_text(hcp_lint_report** out, const char* text, size_t length, const char* name,
                                 const hcp_lint_options* options);
HCP_API void hcp_lint_report_destroy(hcp_lint_report* report);
HCP_API hcp_status hcp_lint_report_last_error(char** out_message, const hcp_lint_report* report);

/* Number of findings, and finding i (0-based, sorted by position). Since 0.1. */
HCP_API hcp_status hcp_lint_report_count(size_t* out_count, const hcp_lint_report* report);
HCP_API hcp_status hcp_lint_report_get(hcp_lint_diagnostic* out, const hcp_lint_report* report, size_t index);
/* The report as "text" (no colour), "json", "sarif" or "github"; release with hcp_free. Since 0.1. */
HCP_API hcp_status hcp_lint_report_render(char** out_text, const hcp_lint_report* report, const char* format);

/* ---- logscan: was hierarchical CP really active? ------------------------------------------------------------ */

/* Since 0.1. */
typedef struct hcp_logscan_options {
  size_t struct_size;
  const char* gpu; /* GPU model when the logs do not name it ("h200"); NULL: from the logs only */
  /* Since 0.7 (the 0.1 size, ending after gpu, is still accepted): 1 keeps every iteration line's loss, time and
   * TFLOP/s for the charts of the "html" rendering; 0: not kept (the HTML page then has no charts). */
  int32_t series;
  int32_t reserved0; /* must be 0 */
} hcp_logscan_options;
#define HCP_LOGSCAN_OPTIONS_INIT { sizeof(hcp_logscan_options), NULL, 0, 0 }
HCP_API hcp_status hcp_logscan_options_init(hcp_logscan_options* options, size_t struct_size); /* since 0.5 */

/* A streaming scanner: a training process can scan its own output as it writes it. One thread at a time per
 * scanner; scanners are independent. */
typedef struct hcp_logscanner hcp_logscanner;
/* The result: immutable, readable from any number of threads. */
typedef struct hcp_logscan_report hcp_logscan_report;

HCP_API hcp_status hcp_logscan_create(hcp_logscanner** out, const hcp_logscan_options* options);
/* Starts a new input (file, rank, stream) named `name`; each input has its own decoder and line numbers. Optional:
 * feeding without it starts an input named "<stream>". */
HCP_API hcp_status hcp_logscan_begin_input(hcp_logscanner* scanner, const char* name);
/* Raw bytes of the current input: plain text, zstd or gzip (detected from the first bytes), in any chunking. */
HCP_API hcp_status hcp_logscan_feed(hcp_logscanner* scanner, const void* data, size_t size);
/* Ends the inputs and computes the verdict. The scanner is spent: later feeds give HCP_ERR_INVALID_ARGUMENT. */
HCP_API hcp_status hcp_logscan_finish(hcp_logscan_report** out, hcp_logscanner* scanner);
HCP_API void hcp_logscan_destroy(hcp_logscanner* scanner);
HCP_API hcp_status hcp_logscan_last_error(char** out_message, const hcp_logscanner* scanner);

/* Live reading: what happened since the last poll, one event per call. The verdict comes once the evidence settles
 * it (a conclusive verdict, or any verdict after the first training step) and again whenever it changes; each new
 * failure and warning comes as it is read. The strings belong to the scanner and stay valid until the next poll,
 * feed, begin_input or finish on it. Since 0.4. */
typedef int32_t hcp_logscan_event_kind;
enum hcp_logscan_event_kind_value {
  HCP_LOGSCAN_EVENT_NONE = 0, /* nothing new */
  HCP_LOGSCAN_EVENT_VERDICT = 1,
  HCP_LOGSCAN_EVENT_FAILURE = 2,
  HCP_LOGSCAN_EVENT_WARNING = 3
};
typedef struct hcp_logscan_event {
  size_t struct_size;
  hcp_logscan_event_kind kind;
  int32_t rank;        /* the rank it was seen on; -1 when unknown */
  const char* name;    /* VERDICT: "cp-silently-off", ...; FAILURE/WARNING: its kind ("cuda-oom", "nccl-timeout") */
  const char* message; /* VERDICT: the first reason; FAILURE/WARNING: the line or a summary */
  const char* file;    /* where it was seen; "" when the event has no place */
  uint64_t line;       /* 1-based; 0 when none */
} hcp_logscan_event;
#define HCP_LOGSCAN_EVENT_INIT { sizeof(hcp_logscan_event), 0, -1, NULL, NULL, NULL, 0 }
HCP_API hcp_status hcp_logscan_event_init(hcp_logscan_event* event, size_t struct_size); /* since 0.5 */
HCP_API hcp_status hcp_logscan_poll(hcp_logscanner* scanner, hcp_logscan_event* out);

/* Scans files and directories (recursively) in one call. Unreadable inputs are listed in the report, not errors.
 * Regular files are mapped; the first call installs a process-wide SIGBUS handler so that a file truncated while it
 * is read is reported as damaged instead of ending the process. It passes every other SIGBUS to the handler that
 * was installed before it; a handler installed later must do the same. */
HCP_API hcp_status hcp_logscan_scan_paths(hcp_logscan_report** out, const char* const* paths, size_t num_paths,
                                          const hcp_logscan_options* options);
/* "hcp-active", "hcp-not-active", "cp-silently-off", "dynamic-cp", "flat-cp", "no-cp" or "unknown"; static
   storage. "dynamic-cp" is new after 0.7.0 (JSON report version 3): treat a verdict not listed here as unknown. */
HCP_API hcp_status hcp_logscan_report_verdict(const char** out_verdict, const hcp_logscan_report* report);
/* "text", "json" (the full report), "github" or (since 0.7) "html" (one self-contained page; its charts need
 * hcp_logscan_options.series); release with hcp_free. */
HCP_API hcp_status hcp_logscan_report_render(char** out_text, const hcp_logscan_report* report, const char* format);
HCP_API void hcp_logscan_report_destroy(hcp_logscan_report* report);
HCP_API hcp_status hcp_logscan_report_last_error(char** out_message, const hcp_logscan_report* report);

/* ---- plan: which CP layout for a model on a cluster (`hcp plan`, docs/plan.md) ------------------------------ */

/* Since 0.7. Zero (or NULL) leaves a value to its default (the model preset's, the GPU preset's, or the plan's),
 * except `window`, where 0 is a window of 0 tokens and -1 is none: start from HCP_PLAN_OPTIONS_INIT or
 * hcp_plan_options_init, which set it to -1. */
typedef struct hcp_plan_options {
  size_t struct_size;
  const char* model;     /* a preset ("llama3-8b", "llama3-70b", "llama3-405b", "qwen2.5-72b") or NULL */
  int64_t layers;        /* this field to vocab: override the preset; required without one */
  int64_t hidden;
  int64_t ffn_hidden;    /* gated MLP (three matrices) */
  int64_t heads;
  int64_t kv_heads;      /* 0: heads */
  int64_t head_dim;      /* 0: hidden / heads */
  int64_t vocab;
  int64_t seq;           /* required */
  int64_t micro_batch;   /* 0: 1 */
  int64_t global_batch;  /* sequences per step; 0: 16M tokens' worth */
  int64_t window;        /* sliding window (left) in tokens; -1: none (the _INIT default) */
  int32_t packed;        /* 1: packed sequences (thd) */
  int32_t dtype_bytes;   /* 0: 2 (bf16) */
  int64_t nodes;         /* required */
  int64_t gpus_per_node; /* 0: 8 */
  const char* gpu;       /* a preset ("a100", "h100", "h200", "b200", "gb200") or NULL (then every figure below) */
  double peak_tflops;    /* this field to network_gbs: override the preset */
  double memory_gib;
  double nvlink_gbs;
  double network_gbs;
  int64_t tp;             /* 0: enumerated */
  int64_t pp;             /* 0: enumerated */
  const char* order;      /* NULL: "tp-cp-ep-dp-pp" */
  const char* te_version; /* NULL: unknown */
  int32_t full_recompute; /* 1: --recompute full */
  int32_t reserved0;      /* must be 0 */
  double gemm_efficiency;      /* 0: 0.7 */
  double attention_efficiency; /* 0: 0.5 */
  double memory_fraction;      /* 0: 0.9 */
} hcp_plan_options;
#define HCP_PLAN_OPTIONS_INIT                                                                                      \
  { sizeof(hcp_plan_options), NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, NULL,    \
    NULL, 0, 0, 0, 0, 0 }
HCP_API hcp_status hcp_plan_options_init(hcp_plan_options* options, size_t struct_size); /* since 0.7 */
/* Every layout linted, placed, estimated and ranked; rendered as "text" (top rows), "json" (everything) or "html"
 * (one self-contained page, top rows, the winner's layout drawn). top 0: 10. Release with hcp_free.
 * HCP_ERR_INVALID_ARGUMENT names what describes no problem (a missing sequence, heads not divisible by the KV heads,
 * an unknown preset). Thread-safe. Since 0.7. */
HCP_API hcp_status hcp_plan(char** out_text, const hcp_plan_options* options, const char* format, size_t top);

/* ---- CP attention: communicators, contexts, forward and backward ---------------------------------------------- */

/* Log lines of the runtime (e.g. "[hcp] rank 5: created CONTEXT_PARALLEL_GROUP size=4 ranks=[4,5,6,7]") go to
 * this callback, without a trailing newline; level 0 error .. 3 debug, threshold from HCP_LOG_LEVEL. NULL restores
 * the default (stderr). Since 0.2. Rules (since 0.5): calls are serialised - never two at once - and made with no
 * hcp lock held, so the callback may call any hcp function, including hcp_set_log_callback and functions that log
 * (their lines are delivered after it returns). A line may be delivered on another thread than the one that logged
 * it (the thread then delivering), in order. When hcp_set_log_callback returns, the previous callback is not
 * running and will not be called again, so its `user` may be freed - unless it is called from that callback. Keep
 * the callback short: while it runs, the threads that log do not wait, but the one delivering does. */
typedef int32_t hcp_log_level;
enum hcp_log_level_value { HCP_LOG_ERROR = 0, HCP_LOG_WARN = 1, HCP_LOG_INFO = 2, HCP_LOG_DEBUG = 3 }; /* since 0.5 */
typedef void (*hcp_log_fn)(hcp_log_level level, const char* line, void* user);
HCP_API hcp_status hcp_set_log_callback(hcp_log_fn callback, void* user);

typedef int32_t hcp_dtype;
enum hcp_dtype_value { HCP_DTYPE_F32 = 0, HCP_DTYPE_BF16 = 1, HCP_DTYPE_F16 = 2 };
typedef int32_t hcp_device;
enum hcp_device_value { HCP_DEVICE_CPU = 0, HCP_DEVICE_CUDA = 1 };
typedef int32_t hcp_cp_comm;
enum hcp_cp_comm_value {
  HCP_CP_COMM_P2P = 0,
  HCP_CP_COMM_A2A = 1,
  HCP_CP_COMM_A2A_P2P = 2, /* needs two hierarchical levels [a2a, p2p] */
  HCP_CP_COMM_ALL_GATHER = 3
};

/* A tensor descriptor. q, out, dout, dq: [B, S_local, H, D]; k, v, dk, dv: [B, S_local, Hkv, D]; lse: [B, H,
 * S_local] fp32. Strides are in elements: the last dimension must be contiguous (stride 1), the others any positive
 * values (since 0.3; strided tensors are packed into contiguous scratch memory around the call, and outputs must not
 * overlap themselves). A stride of 0 means the contiguous stride of its dimension (the product of the later
 * dimensions' extents and strides; since 0.5), so all-zero strides describe a contiguous tensor. `device` says where `data` lives:
 * host memory, or device memory of the current CUDA device (since 0.3; HCP_ERR_UNSUPPORTED in builds without the
 * GPU path), and must match the device of the context or simulation that gets it. `data` is read only for inputs
 * (q, k, v, out and lse of the backward, dout). Since 0.2. */
typedef struct hcp_tensor {
  size_t struct_size;
  void* data;
  hcp_dtype dtype;
  hcp_device device;
  int32_t ndim;
  int32_t reserved0; /* must be 0 */
  int64_t shape[4];
  int64_t strides[4];
} hcp_tensor;
#define HCP_TENSOR_INIT { sizeof(hcp_tensor), NULL, HCP_DTYPE_F32, HCP_DEVICE_CPU, 0, 0, {0, 0, 0, 0}, {0, 0, 0, 0} }
HCP_API hcp_status hcp_tensor_init(hcp_tensor* tensor, size_t struct_size); /* since 0.5 */

/* An in-process world of `ranks` communicators; each must be driven by its own thread (one thread per
 * communicator at a time). An operation that does not complete within timeout_ms fails with HCP_ERR_TIMEOUT and a
 * failing rank makes the others fail with HCP_ERR_COMM. Destroy only after every rank's thread is done with it. */
typedef struct hcp_world hcp_world;
typedef struct hcp_comm hcp_comm;
/* Every timeout_ms of this header: 0 means 60000 (since 0.5); otherwise 1 to 2^31 - 1 ms (HCP_ERR_INVALID_ARGUMENT
 * outside). */
HCP_API hcp_status hcp_world_create(hcp_world** out, int32_t ranks, int64_t timeout_ms);
HCP_API void hcp_world_destroy(hcp_world* world);
HCP_API hcp_status hcp_world_last_error(char** out_message, const hcp_world* world);
/* Borrowed: owned by the world. Any thread may fetch it. */
HCP_API hcp_status hcp_world_comm(hcp_comm** out, hcp_world* world, int32_t rank);
/* A communicator's rank and size (since 0.5): what an MPI process needs for its hcp_parallel_config. */
HCP_API hcp_status hcp_comm_rank(int32_t* out_rank, int32_t* out_size, const hcp_comm* comm);
/* Marks the calling rank as failed; every other rank's operations then fail. Any thread. */
HCP_API hcp_status hcp_comm_abort(hcp_comm* comm, const char* reason);

/* NCCL communicators (builds with the GPU path; HCP_ERR_UNSUPPORTED otherwise or without a CUDA device). Buffers
 * are device memory and every operation is ordered on `cuda_stream` (a cudaStream_t; NULL: the legacy default
 * stream), which must be the stream of the CP context that uses the communicator. Operations wait for completion
 * while polling NCCL for errors: an NCCL error gives HCP_ERR_COMM, no completion within timeout_ms gives
 * HCP_ERR_TIMEOUT, and either aborts the NCCL communicator (ncclCommAbort). One thread at a time per communicator.
 * Since 0.3. */
#define HCP_NCCL_UNIQUE_ID_BYTES 128
/* The bytes of a fresh ncclUniqueId: rank 0 creates it and sends it to the other ranks out of band. */
HCP_API hcp_status hcp_nccl_unique_id(uint8_t out_id[HCP_NCCL_UNIQUE_ID_BYTES]);
/* Creates and owns a non-blocking NCCL communicator of `size` ranks. Collective over those ranks (one per GPU). */
HCP_API hcp_status hcp_comm_create_nccl(hcp_comm** out, const uint8_t id[HCP_NCCL_UNIQUE_ID_BYTES], int32_t rank,
                                        int32_t size, void* cuda_stream, int64_t timeout_ms);
/* Wraps the caller's ncclComm_t (passed as void*): not destroyed by hcp_comm_destroy, but aborted on an error or a
 * timeout. */
HCP_API hcp_status hcp_comm_wrap_nccl(hcp_comm** out, void* nccl_comm, void* cuda_stream, int64_t timeout_ms);
/* Destroys a communicator from hcp_comm_create_nccl / _wrap_nccl / _create_mpi / _create_nccl_mpi /
 * _create_callbacks after every use of it has ended. NULL and world communicators (owned by their world) are
 * ignored. */
HCP_API void hcp_comm_destroy(hcp_comm* comm);
HCP_API hcp_status hcp_comm_last_error(char** out_message, const hcp_comm* comm);

/* MPI: ranks that are processes (mpirun, srun), since 0.5. The MPI backend is libhcp_mpi.so, loaded on first use
 * (beside libhcp.so, or $HCP_MPI_MODULE); without it - a build without HCP_WITH_MPI, no Open MPI here - these give
 * HCP_ERR_UNSUPPORTED naming what is missing. Communicators are given by their Fortran handle, so that callers
 * without MPI headers can build against this header: MPI_Comm_c2f(comm), mpi4py's comm.py2f(), or
 * HCP_MPI_COMM_WORLD. Every wait polls with the timeout: a rank that fails or times out tells the others, which
 * fail with HCP_ERR_COMM naming it (or HCP_ERR_TIMEOUT) instead of waiting; a process that dies ends the job (Open
 * MPI's launcher stops the rest). One thread at a time per communicator. */
#define HCP_MPI_COMM_WORLD ((int64_t)-1)
/* MPI_Init_thread (MPI_THREAD_SERIALIZED) unless the process has initialised MPI; *out_initialized_here (may be
 * NULL) is 1 when this call did. */
HCP_API hcp_status hcp_mpi_init(int32_t* out_initialized_here);
/* MPI_Finalize when hcp_mpi_init initialised MPI, nothing otherwise; destroy the MPI communicators first. */
HCP_API hcp_status hcp_mpi_finalize(void);
/* A communicator of the ranks of `mpi_comm` (duplicated: hcp's messages never meet the caller's), owned by the
 * caller (hcp_comm_destroy). Collective over mpi_comm; MPI must be initialised. */
HCP_API hcp_status hcp_comm_create_mpi(hcp_comm** out, int64_t mpi_comm, int64_t timeout_ms);
/* NCCL started over MPI: rank 0 of mpi_comm creates the unique id, MPI broadcasts it, and every rank creates its
 * NCCL communicator with its rank and size in mpi_comm (as hcp_comm_create_nccl). Collective over mpi_comm. */
HCP_API hcp_status hcp_comm_create_nccl_mpi(hcp_comm** out, int64_t mpi_comm, void* cuda_stream, int64_t timeout_ms);

/* A communicator made of the caller's functions (since 0.8), for processes that already have their groups
 * (torch.distributed, JAX, a trainer's own collectives): hcp moves its data through them, over the same ranks and
 * groups as the rest of the job. Initialise with HCP_COMM_CALLBACKS_INIT or hcp_comm_callbacks_init, set rank,
 * size, the functions and `user`, and pass it to hcp_comm_create_callbacks (which copies it).
 * - Every function gets `user` and, except abort, error_message and release, the communicator's `cuda_stream`
 *   (NULL for host buffers), and returns 0 on success or anything else on failure; hcp then fails the call with
 *   HCP_ERR_COMM naming the function, the rank and error_message's text (when that function is given). hcp calls
 *   them from the thread that drives the communicator, one call at a time, and abort from any thread.
 * - The exchanges mean what the built-in communicators' do: send_recv sends send_bytes from `send` to rank `dst`
 *   and receives recv_bytes from rank `src` into `recv` (a ring step; with send_recv_wait given it may only start
 *   the exchange, which send_recv_wait then completes, and hcp computes in between without touching the buffers);
 *   all_to_all sends chunk j of `send` (size chunks of chunk_bytes) to rank j and receives rank j's chunk as chunk
 *   j of `recv`; all_gather puts every rank's chunk_bytes in rank order; reduce_scatter_sum_f32 gives each rank the
 *   sum over ranks of its block of `count` floats (summed in rank order for the same bits on every run); barrier.
 *   Messages between two ranks match in the order they were posted; collectives run in the same order on every
 *   member.
 * - split (NULL: this communicator cannot be split, so no CP context can be created on it) is collective: the
 *   members that pass the same color >= 0 form a new group ordered by (key, rank), which the function returns in
 *   *out as a communicator of its own (hcp_comm_create_callbacks, or any communicator the caller owns) that hcp
 *   then owns; a negative color leaves *out NULL. hcp_cp_context_create splits the CP group and each hierarchical
 *   level from the world communicator it is given.
 * - abort tells the other members that this rank failed, so that their pending and later calls fail instead of
 *   waiting; hcp calls it when one of the functions fails on this rank, and every later call on the communicator
 *   then fails.
 * - Timeouts are the functions' own: hcp cannot interrupt a function that never returns, so give the caller's
 *   collectives a timeout (torch.distributed's process-group timeout).
 * - release (NULL: none) is called once with `user` when the communicator is destroyed: by hcp_comm_destroy, or
 *   with the CP context that split it. */
typedef int32_t (*hcp_comm_send_recv_fn)(void* user, const void* send, size_t send_bytes, int32_t dst, void* recv,
                                         size_t recv_bytes, int32_t src, void* cuda_stream);
typedef int32_t (*hcp_comm_stream_fn)(void* user, void* cuda_stream); /* send_recv_wait, barrier */
typedef int32_t (*hcp_comm_exchange_fn)(void* user, const void* send, void* recv, size_t chunk_bytes,
                                        void* cuda_stream); /* all_to_all, all_gather */
typedef int32_t (*hcp_comm_reduce_scatter_fn)(void* user, const float* send, float* recv, size_t count,
                                              void* cuda_stream);
typedef int32_t (*hcp_comm_split_fn)(void* user, int32_t color, int32_t key, hcp_comm** out, void* cuda_stream);
typedef void (*hcp_comm_abort_fn)(void* user, const char* reason);
typedef const char* (*hcp_comm_error_message_fn)(void* user);
typedef void (*hcp_comm_release_fn)(void* user);
typedef struct hcp_comm_callbacks {
  size_t struct_size;
  void* user;
  int32_t rank;
  int32_t size;
  hcp_device device; /* HCP_DEVICE_CPU: buffers are host memory; HCP_DEVICE_CUDA: device memory on cuda_stream */
  int32_t reserved0; /* must be 0 */
  void* cuda_stream;
  hcp_comm_send_recv_fn send_recv;
  hcp_comm_stream_fn send_recv_wait; /* NULL: send_recv completes the exchange */
  hcp_comm_exchange_fn all_to_all;
  hcp_comm_exchange_fn all_gather;
  hcp_comm_reduce_scatter_fn reduce_scatter_sum_f32;
  hcp_comm_stream_fn barrier;
  hcp_comm_split_fn split; /* NULL: cannot be split */
  hcp_comm_abort_fn abort;
  hcp_comm_error_message_fn error_message; /* NULL, or why this rank's last call failed */
  hcp_comm_release_fn release;             /* NULL, or called once when the communicator is destroyed */
} hcp_comm_callbacks;
#define HCP_COMM_CALLBACKS_INIT                                                                                    \
  { sizeof(hcp_comm_callbacks), NULL, 0, 1, HCP_DEVICE_CPU, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
    NULL, NULL }
HCP_API hcp_status hcp_comm_callbacks_init(hcp_comm_callbacks* callbacks, size_t struct_size);
/* Owned by the caller (hcp_comm_destroy). HCP_ERR_INVALID_ARGUMENT when a required function (every one but
 * send_recv_wait, split, error_message and release) is NULL or rank is not in [0, size). */
HCP_API hcp_status hcp_comm_create_callbacks(hcp_comm** out, const hcp_comm_callbacks* callbacks);

/* Per-call options of hcp_attn_forward / hcp_attn_backward. Since 0.2. Versions: struct_size at the end of
 * reserved0 (0.2, 24 bytes on LP64) or the whole struct (0.6, 64 bytes). `causal` is always read: the default
 * (_INIT, _init) is 1, a zeroed struct means no mask.
 * Since 0.6, packed sequences and sliding windows, under every hcp_cp_comm:
 * - Packed sequences (Transformer Engine's thd layout): num_sequences > 0 documents packed one after another in
 *   the batch, which must then be B = 1 (the tensors [1, T_local, H, D], lse [1, H, T_local]). cu_seqlens holds
 *   num_sequences + 1 offsets of the documents' real lengths, cu_seqlens_padded (NULL: cu_seqlens) where each
 *   starts; every padded length must be divisible by 2 cp. Each document is split into 2 cp chunks and CP rank r
 *   holds chunks r and 2cp-1-r of every document, in document order (hcp_packed_rank_indices): T_local is the
 *   padded total / cp. Causal is then within each document, no token sees another document, and padding rows see
 *   nothing (out 0, lse -inf, gradients 0). Every rank passes the same offsets (checked: HCP_ERR_SHAPE).
 * - A sliding window (sliding_window = 1; TE's window_size): a query at position i of its document sees keys
 *   i - window_left .. i + window_right, each side -1 for unbounded; with causal, later keys stay hidden. */
/* Attention sinks (Transformer Engine's softmax_type; gpt-oss): one more logit per head in every query's softmax
 * denominator, which takes probability mass and carries no value - 0 for HCP_SOFTMAX_OFF_BY_ONE, softmax_offset[h]
 * for HCP_SOFTMAX_LEARNABLE. Applied once to each query's result under every scheme; the forward's lse is then the
 * sink's, log(exp(lse) + exp(sink)). A row that sees no key (padding) stays empty (out 0, lse -inf). */
typedef int32_t hcp_softmax_type; /* since 0.8 */
enum hcp_softmax_type_value { HCP_SOFTMAX_VANILLA = 0, HCP_SOFTMAX_OFF_BY_ONE = 1, HCP_SOFTMAX_LEARNABLE = 2 };

typedef struct hcp_attn_options {
  size_t struct_size;
  int32_t causal;         /* 1: causal mask over the global sequence (each document's, when packed), 0: none */
  float softmax_scale;    /* 0: 1/sqrt(D) */
  int32_t kernel_threads; /* CPU kernel threads of this rank; 0 or 1: the calling thread only */
  int32_t reserved0;      /* must be 0 */
  int32_t sliding_window; /* since 0.6: 1: window_left and window_right apply; 0: no window */
  uint32_t num_sequences; /* since 0.6: packed documents; 0: not packed (one sequence per batch row) */
  int64_t window_left;    /* since 0.6: -1 or >= 0 */
  int64_t window_right;   /* since 0.6: -1 or >= 0 */
  const int64_t* cu_seqlens;        /* since 0.6: num_sequences + 1 offsets, from 0, of the real lengths */
  const int64_t* cu_seqlens_padded; /* since 0.6: num_sequences + 1 offsets where the documents start; NULL: cu_seqlens */
  hcp_softmax_type softmax_type;    /* since 0.8: attention sinks; HCP_SOFTMAX_VANILLA: none */
  int32_t reserved1;                /* since 0.8: must be 0 */
  const float* softmax_offset;      /* since 0.8: LEARNABLE: H sink logits (host memory), the same on every rank */
  float* d_softmax_offset;          /* since 0.8: LEARNABLE, backward: the sinks' gradient (H floats, host memory),
                                       summed over every query of the CP group, the same on every rank; NULL: not
                                       wanted */
  float* max_logit;                 /* since 0.8, hcp_attn_forward: each head's largest logit, softmax_scale x q.k
                                       over the visible pairs of the whole batch and CP group (Transformer Engine's
                                       return_max_logit; H floats, host memory, the same on every rank); NULL: not
                                       computed. Every rank asks for it or none (HCP_ERR_SHAPE otherwise) */
  const hcp_tensor* attn_bias;      /* since 0.8: attention bias (Transformer Engine's post_scale_bias), added to
                                       softmax_scale x q.k before the softmax; NULL: none. This rank's query rows
                                       against every key of the sequence, as TE's CP takes it: float32
                                       [Bb, Hb, S_local, S] with Bb 1 or B, Hb 1 or H, S = S_local x cp and the
                                       keys in natural order, or [1, 1, 1, S] (TE's 111s); every rank the same
                                       shape, on the context's device. Not with packed sequences (as TE) */
  const hcp_tensor* d_attn_bias;    /* since 0.8, hcp_attn_backward: the bias's gradient in its shape (summed over
                                       the dimensions it broadcasts; [1, 1, 1, S]: over the CP group too, the same
                                       on every rank); NULL: not wanted */
} hcp_attn_options;
#define HCP_ATTN_OPTIONS_INIT \
  { sizeof(hcp_attn_options), 1, 0.0f, 1, 0, 0, 0, -1, -1, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL }
HCP_API hcp_status hcp_attn_options_init(hcp_attn_options* options, size_t struct_size); /* since 0.5 */

/* A rank's CP context: the CP group and hierarchical level groups of `config`, split from `world_comm` (whose size
 * must be config->world_size), with the scheme `cp_comm`. Collective: every rank of the world calls it, each from
 * its own thread. Logs the created groups. One thread at a time per context. The context uses `world_comm` (and
 * groups split from it) in every call: destroy it before its world or communicator. A rank whose create fails -
 * an invalid config included - aborts its communicator, so that the other ranks fail instead of waiting for it;
 * the communicator then fails every later operation (HCP_ERR_COMM): make a new world (or NCCL communicator) to
 * retry. */
typedef struct hcp_cp_context hcp_cp_context;
HCP_API hcp_status hcp_cp_context_create(hcp_cp_context** out, const hcp_parallel_config* config,
                                         hcp_comm* world_comm, hcp_cp_comm cp_comm);
/* Where a context computes (since 0.3): HCP_DEVICE_CPU, or HCP_DEVICE_CUDA - the current CUDA device, every kernel
 * and copy ordered on cuda_stream (a cudaStream_t; NULL: the legacy default stream), tensors in device memory. Over
 * an in-process world, CUDA contexts on one device exchange device to device (cudaMemcpyAsync from the peer's
 * buffer) and contexts on different devices through host memory; over NCCL communicators data stays on the GPU. */
typedef struct hcp_cp_context_options {
  size_t struct_size;
  hcp_device device;
  int32_t reserved0; /* must be 0 */
  void* cuda_stream;
} hcp_cp_context_options;
#define HCP_CP_CONTEXT_OPTIONS_INIT { sizeof(hcp_cp_context_options), HCP_DEVICE_CPU, 0, NULL }
HCP_API hcp_status hcp_cp_context_options_init(hcp_cp_context_options* options, size_t struct_size); /* since 0.5 */
/* hcp_cp_context_create with options (NULL: the defaults, the CPU). Since 0.3. */
HCP_API hcp_status hcp_cp_context_create_with(hcp_cp_context** out, const hcp_parallel_config* config,
                                              hcp_comm* world_comm, hcp_cp_comm cp_comm,
                                              const hcp_cp_context_options* options);
/* A rank's CP context on groups the caller made (since 0.8), nothing split: `cp_group`, the CP group in CP rank
 * order, and for HCP_CP_COMM_A2A_P2P the level groups [a2a, p2p] (num_levels 2; NULL and 0 for the other schemes),
 * e.g. callback communicators over a framework's groups. Collective over cp_group. The groups are borrowed: destroy
 * the context first. a2a+p2p needs CP rank = a2a rank + a2a size x p2p rank on every member, as Megatron's layout
 * gives (every member's ranks are checked on every rank: HCP_ERR_INVALID_CONFIG on all of them otherwise). options
 * as hcp_cp_context_create_with (NULL: the CPU). */
HCP_API hcp_status hcp_cp_context_create_on_groups(hcp_cp_context** out, hcp_comm* cp_group,
                                                   hcp_comm* const* level_groups, uint32_t num_levels,
                                                   hcp_cp_comm cp_comm, const hcp_cp_context_options* options);
HCP_API void hcp_cp_context_destroy(hcp_cp_context* context);
HCP_API hcp_status hcp_cp_context_last_error(char** out_message, const hcp_cp_context* context);
HCP_API hcp_status hcp_cp_context_rank(int32_t* out_cp_rank, int32_t* out_cp_size, const hcp_cp_context* context);

/* This rank's dual chunks (chunk r and 2W-1-r of the sequence) in, its out (q's dtype) and lse out. Collective over
 * the CP group; ranks that disagree on shapes get HCP_ERR_SHAPE. q [B, S, H, D], k [B, S, Hkv, D], v
 * [B, S, Hkv, Dv], out [B, S, H, Dv]: v's head dim may differ from q's and k's (MLA, e.g. DeepSeek's D 192 with
 * Dv 128; since 0.8), and dout and dv then have it too. */
HCP_API hcp_status hcp_attn_forward(hcp_cp_context* context, const hcp_attn_options* options, const hcp_tensor* q,
                                    const hcp_tensor* k, const hcp_tensor* v, const hcp_tensor* out,
                                    const hcp_tensor* lse);
/* From the forward's out and lse and the incoming gradient dout: dq, dk, dv (q's dtype). */
HCP_API hcp_status hcp_attn_backward(hcp_cp_context* context, const hcp_attn_options* options,
                                     const hcp_tensor* q, const hcp_tensor* k, const hcp_tensor* v,
                                     const hcp_tensor* out, const hcp_tensor* lse, const hcp_tensor* dout,
                                     const hcp_tensor* dq, const hcp_tensor* dk, const hcp_tensor* dv);

/* The whole CP computation on `cp` in-process ranks, for demos, tests and bindings: full q [B, S, H, D], k
 * [B, S, Hkv, D] and v [B, S, Hkv, Dv] in (Dv as in hcp_attn_forward); full out [B, S, H, Dv] and lse [B, H, S] out; with dout non-NULL also the full dq, dk, dv. Since 0.2.
 * Versions: struct_size at the end of timeout_ms (0.2), of reserved1 (0.3; 56 bytes on LP64) or the whole struct
 * (0.6; 96 bytes). cp (>= 1) and causal are always read; the rest default when 0. */
typedef struct hcp_attn_simulate_options {
  size_t struct_size;
  int32_t cp;
  hcp_cp_comm cp_comm;
  uint32_t num_hcp_levels;  /* a2a+p2p: 2 */
  int32_t reserved0;        /* must be 0 */
  const int64_t* hcp_sizes; /* a2a+p2p: [a2a, p2p]; other schemes: optional layout levels (since 0.5) */
  int32_t causal;
  float softmax_scale;      /* 0: 1/sqrt(D) */
  int64_t timeout_ms;       /* 0: 60000 */
  hcp_device device;        /* since 0.3: where the ranks compute (all on the current CUDA device, one stream each);
                               the full tensors stay host memory */
  int32_t reserved1;        /* must be 0 */
  /* Since 0.6, as in hcp_attn_options: packed, the full tensors are [1, T, H, D] with T the padded total and lse
   * [1, H, T]. */
  int32_t sliding_window;
  uint32_t num_sequences;
  int64_t window_left;
  int64_t window_right;
  const int64_t* cu_seqlens;
  const int64_t* cu_seqlens_padded;
  /* Since 0.8, as in hcp_attn_options: attention sinks (d_softmax_offset gets the gradient of the whole batch). */
  hcp_softmax_type softmax_type;
  int32_t reserved2; /* must be 0 */
  const float* softmax_offset;
  float* d_softmax_offset;
  float* max_logit; /* since 0.8, as in hcp_attn_options */
  /* Since 0.8, as in hcp_attn_options, of the whole sequence: [Bb, Hb, S, S] or [1, 1, 1, S]; d_attn_bias (with
   * dout) gets its gradient. */
  const hcp_tensor* attn_bias;
  const hcp_tensor* d_attn_bias;
} hcp_attn_simulate_options;
#define HCP_ATTN_SIMULATE_OPTIONS_INIT                                                                         \
  { sizeof(hcp_attn_simulate_options), 1, HCP_CP_COMM_P2P, 0, 0, NULL, 1, 0.0f, 60000, HCP_DEVICE_CPU, 0, 0, 0, -1, \
    -1, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL }
HCP_API hcp_status hcp_attn_simulate_options_init(hcp_attn_simulate_options* options, size_t struct_size); /* since 0.5 */
HCP_API hcp_status hcp_attn_simulate(const hcp_attn_simulate_options* options, const hcp_tensor* q,
                                     const hcp_tensor* k, const hcp_tensor* v, const hcp_tensor* out,
                                     const hcp_tensor* lse, const hcp_tensor* dout, const hcp_tensor* dq,
                                     const hcp_tensor* dk, const hcp_tensor* dv);

/* The rows of a padded packed batch that CP rank `rank` of `cp` holds, in its local order (Transformer Engine's
 * thd_get_partitioned_indices): per document, chunk rank then chunk 2cp-1-rank of its padded rows. Writes
 * total_padded / cp indices to out_indices (capacity at least that many; HCP_ERR_INVALID_ARGUMENT otherwise) and
 * their number to *out_count. The offsets as in hcp_attn_options (HCP_ERR_SHAPE when they do not fit cp). A data
 * pipeline shards q, k, v and the labels with them. Since 0.6. */
HCP_API hcp_status hcp_packed_rank_indices(const int64_t* cu_seqlens, const int64_t* cu_seqlens_padded,
                                           uint32_t num_sequences, int32_t cp, int32_t rank, int64_t* out_indices,
                                           int64_t capacity, int64_t* out_count);

#ifdef __cplusplus
}
#endif

#endif /* HCP_HCP_H */
