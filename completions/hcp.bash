# bash completion for hcp, hcp-lint and hcp-logscan                    -*- shell-script -*-
#
# Install as hcp in bash-completion's completions directory (for example
# /usr/share/bash-completion/completions/hcp) with hcp-lint and hcp-logscan as links to it, since bash-completion
# loads a completion by the command's name; or source this file from ~/.bashrc.
#
# The options and their fixed values are those of cli/src/*_command.cpp. Each command's options are in the function
# of that command (_hcp_groups, _hcp_lint, ..., _hcp_logscan_diff); tests/cli/test_completions.py checks each
# function against the command's --help.

# The word being completed ($cur), the word before it ($prev) and what a reply must start with ($pfx) are locals
# of _hcp, seen by the functions it calls.

# _hcp_reply WORDS: the words of WORDS that start with $cur.
_hcp_reply() {
  mapfile -t COMPREPLY < <(compgen -W "$1" -- "$cur")
  if [[ -n $pfx ]]; then
    COMPREPLY=("${COMPREPLY[@]/#/$pfx}")
  fi
}

# _hcp_reply_list WORDS: complete the last item of a comma-separated list of WORDS.
_hcp_reply_list() {
  local head=""
  if [[ $cur == *,* ]]; then
    head=${cur%,*},
  fi
  local cur=${cur##*,} pfx=$pfx$head
  _hcp_reply "$1"
  compopt -o nospace 2>/dev/null
}

# _hcp_files: file and directory names.
_hcp_files() {
  compopt -o filenames 2>/dev/null
  mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  if [[ -n $pfx ]]; then
    COMPREPLY=("${COMPREPLY[@]/#/$pfx}")
  fi
}

# _hcp_rule_codes: the lint rule codes (HCP001, ...), from the program being completed.
_hcp_rule_codes() {
  local prog=${COMP_WORDS[0]}
  local -a args=(lint --list-rules)
  if [[ ${prog##*/} == hcp-lint ]]; then
    args=(--list-rules)
  fi
  command -v "$prog" >/dev/null 2>&1 || return 0
  "$prog" "${args[@]}" 2>/dev/null | awk '$1 ~ /^HCP[0-9]+$/ { print $1 }'
}

_hcp_groups() {
  case $prev in
    --order) _hcp_reply "tp-cp-ep-dp-pp tp-cp-ep-pp-dp"; return ;;
    --format) _hcp_reply "text json svg"; return ;;
    --world-size | --tp | --pp | --cp | --hcp-sizes | --gpus-per-node | --rank | --max-nodes) return ;;
  esac
  _hcp_reply "-h --help -V --version --world-size --tp --pp --cp --hcp-sizes --order --gpus-per-node --rank --format --svg
    --max-nodes"
}

_hcp_attn() {
  case $prev in
    --comm) _hcp_reply "p2p a2a a2a+p2p all_gather"; return ;;
    --dtype) _hcp_reply "fp32 bf16 fp16"; return ;;
    --device) _hcp_reply "cpu cuda"; return ;;
    --backend) _hcp_reply "inprocess mpi"; return ;;
    --format) _hcp_reply "text json"; return ;;
    --cp | --hcp-sizes | --batch | --seq | --seqlens | --window | --heads | --kv-heads | --head-dim | \
      --gpus-per-node | --inject-fault | --seed | --timeout-ms) return ;;
  esac
  _hcp_reply "-h --help -V --version --cp --hcp-sizes --comm --batch --seq --seqlens --window --heads --kv-heads --head-dim
    --causal --dtype --device --backend --gpus-per-node --inject-fault --backward --check --bench --format --seed
    --timeout-ms"
}

_hcp_lint() {
  case $prev in
    --input-format) _hcp_reply "auto toml yaml overrides megatron python facts"; return ;;
    --format) _hcp_reply "text json sarif github"; return ;;
    --color) _hcp_reply "auto always never"; return ;;
    --fail-on) _hcp_reply "error warning info"; return ;;
    --gpu) _hcp_reply "a100 h100 h200 b200 gb200"; return ;;
    --overrides-file | --config | --facts-json) _hcp_files; return ;;
    --explain) _hcp_reply "$(_hcp_rule_codes)"; return ;;
    --select | --ignore) _hcp_reply_list "$(_hcp_rule_codes)"; return ;;
    --severity)
      _hcp_reply "$(_hcp_rule_codes)"
      compopt -o nospace 2>/dev/null
      return
      ;;
    --world-size | --nodes | --gpus-per-node | --te-version | --exclude | --stdin-filename) return ;;
  esac
  if [[ $cur == -* ]]; then
    _hcp_reply "-h --help -V --version --input-format --overrides-file --facts-json --world-size --nodes --gpus-per-node --te-version --gpu
      --format --color --fail-on --strict --exclude --force-exclude --no-ignore --stdin-filename --config --no-config --show-facts --show-info -v --verbose --select
      --ignore --severity --explain --list-rules --rules-markdown"
  else
    _hcp_files
  fi
}

# _hcp_logscan FIRST: the words from FIRST on are logscan's arguments.
_hcp_logscan() {
  local i word
  for ((i = $1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    case $word in
      --format | --expect | --gpu | --jobs | -j | --exit-on | --poll-ms | --until-idle)
        ((i++))
        if [[ ${COMP_WORDS[i]} == = ]]; then
          ((i++))
        fi
        ;;
      diff)
        _hcp_logscan_diff
        return
        ;;
      -*) ;;
      *) break ;;
    esac
  done
  case $prev in
    --format) _hcp_reply "text json github html"; return ;;
    --expect) _hcp_reply "hcp flat no-cp"; return ;;
    --gpu) _hcp_reply "h100 h200 a100 b200"; return ;;
    --exit-on)
      _hcp_reply_list "cp-silently-off hcp-not-active hcp-active flat-cp no-cp unknown failure"
      return
      ;;
    --jobs | -j | --poll-ms | --until-idle) return ;;
  esac
  if [[ $cur == -* ]]; then
    _hcp_reply "-h --help -V --version --format --expect --gpu -j --jobs --follow --exit-on --poll-ms --until-idle"
  else
    _hcp_files
    if ((i == COMP_CWORD)); then
      mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -W diff -- "$cur")
    fi
  fi
}

_hcp_logscan_diff() {
  case $prev in
    --format) _hcp_reply "text json html"; return ;;
    --gpu) _hcp_reply "h100 h200 a100 b200"; return ;;
    --threshold) return ;;
  esac
  if [[ $cur == -* ]]; then
    _hcp_reply "-h --help --threshold --format --gpu"
  else
    _hcp_files
  fi
}

_hcp_plan() {
  case $prev in
    --model) _hcp_reply "llama3-8b llama3-70b llama3-405b qwen2.5-72b"; return ;;
    --gpu) _hcp_reply "a100 h100 h200 b200 gb200"; return ;;
    --dtype) _hcp_reply "bf16 fp16 fp32"; return ;;
    --recompute) _hcp_reply "selective full"; return ;;
    --order) _hcp_reply "tp-cp-ep-dp-pp tp-cp-ep-pp-dp"; return ;;
    --format) _hcp_reply "text json html"; return ;;
    --layers | --hidden | --ffn-hidden | --heads | --kv-heads | --head-dim | --vocab | --seq | --micro-batch | \
      --global-batch | --window | --nodes | --gpus-per-node | --peak-tflops | --memory-gib | --nvlink-gbs | \
      --network-gbs | --tp | --pp | --te-version | --gemm-efficiency | --attention-efficiency | \
      --memory-fraction | --top) return ;;
  esac
  _hcp_reply "-h --help -V --version --model --layers --hidden --ffn-hidden --heads --kv-heads --head-dim --vocab --seq
    --micro-batch --global-batch --window --packed --dtype --nodes --gpus-per-node --gpu --peak-tflops --memory-gib
    --nvlink-gbs --network-gbs --tp --pp --recompute --order --te-version --gemm-efficiency --attention-efficiency
    --memory-fraction --top --format --html"
}

# The command itself: hcp (its subcommand is the first word that is not an option), hcp-lint or hcp-logscan.
_hcp() {
  local cur prev pfx="" cmd="" first=1 i
  COMPREPLY=()
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=""
  if ((COMP_CWORD > 0)); then
    prev=${COMP_WORDS[COMP_CWORD - 1]}
  fi
  # An option's =VALUE form: split at '=' when COMP_WORDBREAKS has it (the default), one word otherwise.
  if [[ $cur == = ]]; then
    cur=""
  elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
    prev=${COMP_WORDS[COMP_CWORD - 2]}
  elif [[ $cur == -?*=* ]]; then
    prev=${cur%%=*}
    pfx=$prev=
    cur=${cur#*=}
  fi

  case ${COMP_WORDS[0]##*/} in
    hcp-lint) cmd=lint ;;
    hcp-logscan) cmd=logscan ;;
    *)
      for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ ${COMP_WORDS[i]} != -* ]]; then
          cmd=${COMP_WORDS[i]}
          first=$((i + 1))
          break
        fi
      done
      ;;
  esac

  case $cmd in
    groups) _hcp_groups ;;
    attn) _hcp_attn ;;
    lint) _hcp_lint ;;
    logscan) _hcp_logscan "$first" ;;
    plan) _hcp_plan ;;
    "")
      if [[ $cur == -* ]]; then
        _hcp_reply "-h --help -V --version"
      else
        _hcp_reply "groups attn lint logscan plan"
      fi
      ;;
  esac
  return 0
}

complete -F _hcp hcp hcp-lint hcp-logscan
