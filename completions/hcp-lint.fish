# fish completion for hcp-lint, the same program as `hcp lint` (completions/hcp.fish).
# Install into a directory of $fish_complete_path, for example ~/.config/fish/completions.
# The options and their fixed values are those of cli/src/lint_command.cpp; tests/cli/test_completions.py checks them
# against `hcp-lint --help`.

# The lint rule codes (HCP001, ...) with their names, from the program being completed.
function __hcp_rule_codes
    set -l prog (commandline -opc)[1]
    set -l args lint --list-rules
    if test (string replace -r '.*/' '' -- $prog) = hcp-lint
        set args --list-rules
    end
    command $prog $args 2>/dev/null | string replace -rf '^(HCP[0-9]+)\s+\S+\s+(.*)$' '$1\t$2'
end

complete -c hcp-lint -s h -l help -d 'Print the help message and exit'
complete -c hcp-lint -s V -l version -d 'Print the version and exit'
complete -c hcp-lint -l input-format -x -a 'auto toml yaml overrides megatron python facts' -d 'Input format for every file'
complete -c hcp-lint -l overrides-file -r -F -d 'A file of Hydra overrides, one per line'
complete -c hcp-lint -l facts-json -r -F -d 'The configuration a job built, as JSON'
complete -c hcp-lint -l world-size -x -d 'Total number of GPUs'
complete -c hcp-lint -l nodes -x -d 'Number of nodes'
complete -c hcp-lint -l gpus-per-node -x -d 'GPUs per node (NVLink domain)'
complete -c hcp-lint -l te-version -x -d 'Transformer Engine version, e.g. 2.4.0'
complete -c hcp-lint -l gpu -x -a 'a100 h100 h200 b200 gb200' -d 'GPU model'
complete -c hcp-lint -l format -x -a 'text json sarif github' -d 'Output format'
complete -c hcp-lint -l color -x -a 'auto always never' -d 'Colour in text output'
complete -c hcp-lint -l fail-on -x -a 'error warning info' -d 'Lowest severity that makes the exit code 1'
complete -c hcp-lint -l strict -d 'Same as --fail-on warning'
complete -c hcp-lint -l exclude -x -d 'Leave out files and directories that match this glob (repeatable)'
complete -c hcp-lint -l force-exclude -d 'Apply the exclusions to files named on the command line too'
complete -c hcp-lint -l no-ignore -d 'Walk directories without reading .gitignore, .ignore and .git/info/exclude'
complete -c hcp-lint -l stdin-filename -x -d "The name of the config read from '-', which picks its form"
complete -c hcp-lint -l config -r -F -d 'Read this hcp-lint.toml or pyproject.toml instead of looking for one'
complete -c hcp-lint -l no-config -d 'Do not look for hcp-lint.toml / pyproject.toml'
complete -c hcp-lint -l show-facts -d 'Show what each launch resolves to'
complete -c hcp-lint -l show-info -d 'Show info findings in text, github and sarif output'
complete -c hcp-lint -s v -l verbose -d 'List the inputs skipped as none of the linted forms, and why'
complete -c hcp-lint -l select -x -a '(__fish_complete_list , __hcp_rule_codes)' -d 'Only these rule codes or prefixes'
complete -c hcp-lint -l ignore -x -a '(__fish_complete_list , __hcp_rule_codes)' -d 'Skip these rule codes or prefixes'
complete -c hcp-lint -l severity -x -a '(__hcp_rule_codes)' -d "Change a rule's severity: CODE=error|warning|info"
complete -c hcp-lint -l explain -x -a '(__hcp_rule_codes)' -d "Print a rule's documentation"
complete -c hcp-lint -l list-rules -d 'List every rule'
complete -c hcp-lint -l rules-markdown -d 'Print the rule reference as Markdown'
