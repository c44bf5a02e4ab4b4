# fish completion for hcp-logscan, the same program as `hcp logscan` (completions/hcp.fish).
# Install into a directory of $fish_complete_path, for example ~/.config/fish/completions.
# The options and their fixed values are those of cli/src/logscan_command.cpp; tests/cli/test_completions.py checks
# them against `hcp-logscan --help` and `hcp-logscan diff --help`.

# The events --exit-on takes: the verdicts and failure.
function __hcp_follow_events
    printf '%s\n' cp-silently-off hcp-not-active hcp-active flat-cp no-cp unknown failure
end

complete -c hcp-logscan -n 'not __fish_seen_subcommand_from diff' -s h -l help -d 'Print the help message and exit'
complete -c hcp-logscan -n 'not __fish_seen_subcommand_from diff' -s V -l version -d 'Print the version and exit'
complete -c hcp-logscan -n 'not __fish_seen_subcommand_from diff' -l format -x -a 'text json github html' -d 'Output format'
complete -c hcp-logscan -n 'not __fish_seen_subcommand_from diff' -l expect -x -a 'hcp flat no-cp' -d 'Exit 1 unless the verdict is hcp-active, flat-cp or no-cp'
complete -c hcp-logscan -n 'not __fish_seen_subcommand_from diff' -l gpu -x -a 'h100 h200 a100 b200' -d 'GPU model when the log does not name it'
complete -c hcp-logscan -n 'not __fish_seen_subcommand_from diff' -s j -l jobs -x -d 'Threads reading files (0: every core)'
complete -c hcp-logscan -n 'not __fish_seen_subcommand_from diff' -l follow -d 'Read the logs while the job writes them'
complete -c hcp-logscan -n 'not __fish_seen_subcommand_from diff' -l exit-on -x -a '(__fish_complete_list , __hcp_follow_events)' -d 'With --follow: stop at once on these events'
complete -c hcp-logscan -n 'not __fish_seen_subcommand_from diff' -l poll-ms -x -d 'With --follow: how often to look at the files (ms)'
complete -c hcp-logscan -n 'not __fish_seen_subcommand_from diff' -l until-idle -x -d 'With --follow: stop after this many seconds without new output'
complete -c hcp-logscan -n 'not __fish_seen_subcommand_from diff' -a diff -d 'Compare two runs'

complete -c hcp-logscan -n '__fish_seen_subcommand_from diff' -s h -l help -d 'Print the help message and exit'
complete -c hcp-logscan -n '__fish_seen_subcommand_from diff' -l threshold -x -d 'Regression threshold in percent (default 5)'
complete -c hcp-logscan -n '__fish_seen_subcommand_from diff' -l format -x -a 'text json html' -d 'Output format'
complete -c hcp-logscan -n '__fish_seen_subcommand_from diff' -l gpu -x -a 'h100 h200 a100 b200' -d 'GPU model when the logs do not name it'
