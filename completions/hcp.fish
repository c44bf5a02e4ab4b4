# fish completion for hcp. hcp-lint and hcp-logscan have their own files (completions/hcp-lint.fish,
# completions/hcp-logscan.fish); they are the same program as `hcp lint` and `hcp logscan`.
# Install into a directory of $fish_complete_path, for example ~/.config/fish/completions.
# The options and their fixed values are those of cli/src/*_command.cpp; tests/cli/test_completions.py checks each
# subcommand's lines (by their __fish_seen_subcommand_from condition) against `hcp SUBCOMMAND --help`.

# The lint rule codes (HCP001, ...) with their names, from the program being completed.
function __hcp_rule_codes
    set -l prog (commandline -opc)[1]
    set -l args lint --list-rules
    if test (string replace -r '.*/' '' -- $prog) = hcp-lint
        set args --list-rules
    end
    command $prog $args 2>/dev/null | string replace -rf '^(HCP[0-9]+)\s+\S+\s+(.*)$' '$1\t$2'
end

# The events logscan --exit-on takes: the verdicts and failure.
function __hcp_follow_events
    printf '%s\n' cp-silently-off hcp-not-active hcp-active flat-cp no-cp unknown failure
end

# hcp itself: its options and subcommands. No file names except as lint's and logscan's arguments.
complete -c hcp -n 'not __fish_seen_subcommand_from lint logscan' -f
complete -c hcp -n __fish_use_subcommand -s h -l help -d 'Print the help message and exit'
complete -c hcp -n __fish_use_subcommand -s V -l version -d 'Print the version and exit'
complete -c hcp -n __fish_use_subcommand -a groups -d 'Print the Megatron rank layout with hierarchical CP groups'
complete -c hcp -n __fish_use_subcommand -a attn -d 'Run context-parallel attention on in-process ranks'
complete -c hcp -n __fish_use_subcommand -a lint -d 'Lint training configs for context-parallel pitfalls'
complete -c hcp -n __fish_use_subcommand -a logscan -d 'Decide from training logs whether hierarchical CP was active'
complete -c hcp -n __fish_use_subcommand -a plan -d 'Rank the context-parallel layouts of a model on a cluster'

# hcp groups
complete -c hcp -n '__fish_seen_subcommand_from groups' -s h -l help -d 'Print the help message and exit'
complete -c hcp -n '__fish_seen_subcommand_from groups' -s V -l version -d 'Print the version and exit'
complete -c hcp -n '__fish_seen_subcommand_from groups' -l world-size -x -d 'Total number of ranks (required)'
complete -c hcp -n '__fish_seen_subcommand_from groups' -l tp -x -d 'Tensor-model-parallel size (default 1)'
complete -c hcp -n '__fish_seen_subcommand_from groups' -l pp -x -d 'Pipeline-model-parallel size (default 1)'
complete -c hcp -n '__fish_seen_subcommand_from groups' -l cp -x -d 'Context-parallel size (default 1)'
complete -c hcp -n '__fish_seen_subcommand_from groups' -l hcp-sizes -x -d 'Hierarchical context-parallel sizes, e.g. 2,4 (level 0 first)'
complete -c hcp -n '__fish_seen_subcommand_from groups' -l order -x -a 'tp-cp-ep-dp-pp tp-cp-ep-pp-dp' -d 'Rank order'
complete -c hcp -n '__fish_seen_subcommand_from groups' -l gpus-per-node -x -d 'Ranks per NVLink domain (default 8)'
complete -c hcp -n '__fish_seen_subcommand_from groups' -l rank -x -d "Show only this rank's coordinates and groups"
complete -c hcp -n '__fish_seen_subcommand_from groups' -l format -x -a 'text json svg' -d 'Output format'
complete -c hcp -n '__fish_seen_subcommand_from groups' -l svg -d 'Draw the layout as a self-contained SVG picture'
complete -c hcp -n '__fish_seen_subcommand_from groups' -l max-nodes -x -d 'Nodes drawn in the picture (default 16)'

# hcp attn
complete -c hcp -n '__fish_seen_subcommand_from attn' -s h -l help -d 'Print the help message and exit'
complete -c hcp -n '__fish_seen_subcommand_from attn' -s V -l version -d 'Print the version and exit'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l cp -x -d 'Context-parallel size: number of ranks (default 2)'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l hcp-sizes -x -d 'Hierarchical sizes for a2a+p2p: a2a,p2p'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l comm -x -a 'p2p a2a a2a+p2p all_gather' -d 'CP scheme'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l batch -x -d 'Batch size (default 1)'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l seq -x -d 'Full sequence length, divisible by 2 x cp (default 1024)'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l seqlens -x -d 'Packed documents (thd): their lengths, e.g. 512,3000,700'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l window -x -d 'Sliding window LEFT,RIGHT (-1: unbounded side)'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l heads -x -d 'Query heads (default 8)'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l kv-heads -x -d 'Key/value heads (GQA; default: --heads)'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l head-dim -x -d 'Head dimension (default 128)'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l causal -d 'Causal mask'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l dtype -x -a 'fp32 bf16 fp16' -d 'Input dtype'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l device -x -a 'cpu cuda' -d 'Where the ranks compute'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l backend -x -a 'inprocess mpi' -d 'How the ranks run'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l gpus-per-node -x -d "Ranks per node for the layout's locality (default 8)"
complete -c hcp -n '__fish_seen_subcommand_from attn' -l inject-fault -x -d 'Testing (--backend mpi): RANK:STEP:KIND, KIND kill, hang or abort'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l backward -d 'Also run the backward pass'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l check -d 'Compare with single-rank attention; exit 1 above tolerance'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l bench -d 'Report time and GFLOP/s'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l format -x -a 'text json' -d 'Output format'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l seed -x -d 'Random seed (default 1)'
complete -c hcp -n '__fish_seen_subcommand_from attn' -l timeout-ms -x -d 'Communicator timeout (default 600000)'

# hcp lint (as hcp-lint.fish)
complete -c hcp -n '__fish_seen_subcommand_from lint' -s h -l help -d 'Print the help message and exit'
complete -c hcp -n '__fish_seen_subcommand_from lint' -s V -l version -d 'Print the version and exit'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l input-format -x -a 'auto toml yaml overrides megatron python facts' -d 'Input format for every file'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l overrides-file -r -F -d 'A file of Hydra overrides, one per line'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l facts-json -r -F -d 'The configuration a job built, as JSON'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l world-size -x -d 'Total number of GPUs'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l nodes -x -d 'Number of nodes'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l gpus-per-node -x -d 'GPUs per node (NVLink domain)'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l te-version -x -d 'Transformer Engine version, e.g. 2.4.0'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l gpu -x -a 'a100 h100 h200 b200 gb200' -d 'GPU model'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l format -x -a 'text json sarif github' -d 'Output format'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l color -x -a 'auto always never' -d 'Colour in text output'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l fail-on -x -a 'error warning info' -d 'Lowest severity that makes the exit code 1'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l strict -d 'Same as --fail-on warning'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l exclude -x -d 'Leave out files and directories that match this glob (repeatable)'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l force-exclude -d 'Apply the exclusions to files named on the command line too'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l no-ignore -d 'Walk directories without reading .gitignore, .ignore and .git/info/exclude'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l stdin-filename -x -d "The name of the config read from '-', which picks its form"
complete -c hcp -n '__fish_seen_subcommand_from lint' -l config -r -F -d 'Read this hcp-lint.toml or pyproject.toml instead of looking for one'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l no-config -d 'Do not look for hcp-lint.toml / pyproject.toml'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l show-facts -d 'Show what each launch resolves to'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l show-info -d 'Show info findings in text, github and sarif output'
complete -c hcp -n '__fish_seen_subcommand_from lint' -s v -l verbose -d 'List the inputs skipped as none of the linted forms, and why'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l select -x -a '(__fish_complete_list , __hcp_rule_codes)' -d 'Only these rule codes or prefixes'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l ignore -x -a '(__fish_complete_list , __hcp_rule_codes)' -d 'Skip these rule codes or prefixes'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l severity -x -a '(__hcp_rule_codes)' -d "Change a rule's severity: CODE=error|warning|info"
complete -c hcp -n '__fish_seen_subcommand_from lint' -l explain -x -a '(__hcp_rule_codes)' -d "Print a rule's documentation"
complete -c hcp -n '__fish_seen_subcommand_from lint' -l list-rules -d 'List every rule'
complete -c hcp -n '__fish_seen_subcommand_from lint' -l rules-markdown -d 'Print the rule reference as Markdown'

# hcp logscan (as hcp-logscan.fish)
complete -c hcp -n '__fish_seen_subcommand_from logscan; and not __fish_seen_subcommand_from diff' -s h -l help -d 'Print the help message and exit'
complete -c hcp -n '__fish_seen_subcommand_from logscan; and not __fish_seen_subcommand_from diff' -s V -l version -d 'Print the version and exit'
complete -c hcp -n '__fish_seen_subcommand_from logscan; and not __fish_seen_subcommand_from diff' -l format -x -a 'text json github html' -d 'Output format'
complete -c hcp -n '__fish_seen_subcommand_from logscan; and not __fish_seen_subcommand_from diff' -l expect -x -a 'hcp flat no-cp' -d 'Exit 1 unless the verdict is hcp-active, flat-cp or no-cp'
complete -c hcp -n '__fish_seen_subcommand_from logscan; and not __fish_seen_subcommand_from diff' -l gpu -x -a 'h100 h200 a100 b200' -d 'GPU model when the log does not name it'
complete -c hcp -n '__fish_seen_subcommand_from logscan; and not __fish_seen_subcommand_from diff' -s j -l jobs -x -d 'Threads reading files (0: every core)'
complete -c hcp -n '__fish_seen_subcommand_from logscan; and not __fish_seen_subcommand_from diff' -l follow -d 'Read the logs while the job writes them'
complete -c hcp -n '__fish_seen_subcommand_from logscan; and not __fish_seen_subcommand_from diff' -l exit-on -x -a '(__fish_complete_list , __hcp_follow_events)' -d 'With --follow: stop at once on these events'
complete -c hcp -n '__fish_seen_subcommand_from logscan; and not __fish_seen_subcommand_from diff' -l poll-ms -x -d 'With --follow: how often to look at the files (ms)'
complete -c hcp -n '__fish_seen_subcommand_from logscan; and not __fish_seen_subcommand_from diff' -l until-idle -x -d 'With --follow: stop after this many seconds without new output'
complete -c hcp -n '__fish_seen_subcommand_from logscan; and not __fish_seen_subcommand_from diff' -a diff -d 'Compare two runs'

# hcp logscan diff
complete -c hcp -n '__fish_seen_subcommand_from logscan; and __fish_seen_subcommand_from diff' -s h -l help -d 'Print the help message and exit'
complete -c hcp -n '__fish_seen_subcommand_from logscan; and __fish_seen_subcommand_from diff' -l threshold -x -d 'Regression threshold in percent (default 5)'
complete -c hcp -n '__fish_seen_subcommand_from logscan; and __fish_seen_subcommand_from diff' -l format -x -a 'text json html' -d 'Output format'
complete -c hcp -n '__fish_seen_subcommand_from logscan; and __fish_seen_subcommand_from diff' -l gpu -x -a 'h100 h200 a100 b200' -d 'GPU model when the logs do not name it'

# hcp plan
complete -c hcp -n '__fish_seen_subcommand_from plan' -s h -l help -d 'Print the help message and exit'
complete -c hcp -n '__fish_seen_subcommand_from plan' -s V -l version -d 'Print the version and exit'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l model -x -a 'llama3-8b llama3-70b llama3-405b qwen2.5-72b' -d 'A built-in model shape'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l layers -x -d 'Transformer layers'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l hidden -x -d 'Hidden size'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l ffn-hidden -x -d 'MLP hidden size (gated MLP: three matrices)'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l heads -x -d 'Attention heads'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l kv-heads -x -d 'Key/value heads (query groups; default: heads)'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l head-dim -x -d 'Head dimension (default: hidden / heads)'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l vocab -x -d 'Vocabulary size (model memory only)'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l seq -x -d 'Sequence length in tokens'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l micro-batch -x -d 'Micro-batch size (default 1)'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l global-batch -x -d "Sequences per optimizer step (default: 16M tokens' worth)"
complete -c hcp -n '__fish_seen_subcommand_from plan' -l window -x -d 'Sliding window (left) in tokens'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l packed -d 'Packed sequences (thd)'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l dtype -x -a 'bf16 fp16 fp32' -d 'Activation dtype'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l nodes -x -d 'Nodes (NVLink domains)'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l gpus-per-node -x -d 'GPUs per node / NVLink domain (default 8)'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l gpu -x -a 'a100 h100 h200 b200 gb200' -d 'GPU model'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l peak-tflops -x -d 'Dense bf16 TFLOP/s a GPU (overrides --gpu)'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l memory-gib -x -d 'GPU memory in GiB (overrides --gpu)'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l nvlink-gbs -x -d 'NVLink GB/s a GPU and direction (overrides --gpu)'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l network-gbs -x -d 'Network GB/s a GPU and direction (overrides --gpu)'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l tp -x -d 'Fix tensor parallelism (default: every divisor of the node)'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l pp -x -d 'Fix pipeline parallelism (default: every divisor of the layers up to 16)'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l recompute -x -a 'selective full' -d 'Activation recompute'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l order -x -a 'tp-cp-ep-dp-pp tp-cp-ep-pp-dp' -d 'Rank order'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l te-version -x -d 'Transformer Engine version (its limits reject layouts)'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l gemm-efficiency -x -d 'Fraction of peak the GEMMs reach (default 0.7)'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l attention-efficiency -x -d 'Fraction of peak attention reaches (default 0.5)'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l memory-fraction -x -d 'Fraction of GPU memory a run may fill (default 0.9)'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l top -x -d 'Candidates shown in text (default 10)'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l format -x -a 'text json html' -d 'Output format'
complete -c hcp -n '__fish_seen_subcommand_from plan' -l html -d "A self-contained HTML page with the winner's layout drawn"
