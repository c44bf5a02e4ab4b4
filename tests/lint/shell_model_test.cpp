// The shell model: what a script runs on each path, with each word's provenance.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "../../lint/src/shell/shell_model.hpp"

namespace hcp::lint {
namespace {

// "word" for literal, "word~" computed, "word?" defaulted, "<unknown: why>" unknown.
std::string show(const ShellWord& w) {
  switch (w.provenance) {
    case Provenance::literal: return w.text;
    case Provenance::computed: return w.text + "~";
    case Provenance::defaulted: return w.text + "?";
    case Provenance::unknown: return std::string("<").append(w.text).append(": ").append(w.why).append(">");
  }
  return w.text;
}

// Every path: its conditions, then each command whose first word is `torchrun`, `python` or `run` (the
// commands the tests look at) with its words.
std::string render(const ShellRun& run) {
  std::string out;
  for (const ShellPath& p : run.paths) {
    out += "path";
    for (const std::string& c : p.conditions) out.append(" [").append(c).append("]");
    if (p.exits) out += " exits";
    out += "\n";
    for (const ShellCommand& c : p.commands) {
      if (c.words.empty()) continue;
      const std::string& head = c.words[0].text;
      if (head != "torchrun" && head != "python" && head != "run") continue;
      out += " ";
      for (const ShellWord& w : c.words) out.append(" ").append(show(w));
      for (const ShellEnv& e : c.env) out.append(" {").append(e.name).append("=").append(show(e.value)).append("}");
      out += "\n";
    }
  }
  return out;
}

ShellRun run_text(const std::string& text, std::map<std::string, std::string> files = {}) {
  SourceText s{"dir/job.sh", text, InputFormat::megatron};
  ShellOptions o;
  o.read_sourced = [files](const std::string& path) -> std::optional<SourceText> {
    const auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return SourceText{path, it->second, InputFormat::megatron};
  };
  return run_shell(s, o);
}

TEST(ShellModel, LiteralsVariablesAndQuotes) {
  EXPECT_EQ(render(run_text("CP=4\nA=\"--x  'y'\"\nrun --cp $CP \"$A\" $A '$CP' \"a\"'b'$'c'\n")),
            "path\n  run --cp 4 --x  'y' --x 'y' $CP abc\n");
}

TEST(ShellModel, OutsideValuesAreUnknownWithTheirReason) {
  EXPECT_EQ(render(run_text("CP=${12}\nW=$(nproc)\nrun $CP ${WORLD_SIZE} $W $(( 1024*CP )) ${SLURM_NNODES:-\"1\"}\n")),
            "path\n  run <${12}: positional parameter $12> <${WORLD_SIZE}: environment variable WORLD_SIZE (not set in "
            "the script)> <$(nproc): output of a command $(nproc)> <$(( 1024*CP )): arithmetic with unknown values "
            "$(( 1024*CP ))> 1?\n");
}

TEST(ShellModel, ArithmeticOfKnownValues) {
  EXPECT_EQ(render(run_text("N=2\nG=8\nrun $((N*G)) $(( (N+1) ** 2 )) $((N/0))\n")),
            "path\n  run 16~ 9~ <$((N/0)): arithmetic with unknown values $((N/0))>\n");
}

TEST(ShellModel, NestedQuotesInADefaultDoNotEndTheScript) {
  EXPECT_EQ(render(run_text("X=\"${X:-$(cd \"${D}/..\" && pwd)}\"\nrun a\nrun b\n")), "path\n  run a\n  run b\n");
}

TEST(ShellModel, UnknownBranchesForkWithTheirConditions) {
  EXPECT_EQ(render(run_text("CP=2\nif [ \"$MODE\" = long ]; then CP=8; fi\nrun $CP\n")),
            "path [[ \"$MODE\" = long ]]\n  run 8\npath [not [ \"$MODE\" = long ]]\n  run 2\n");
}

TEST(ShellModel, KnownBranchesDoNotFork) {
  EXPECT_EQ(render(run_text("MODE=long\nif [[ $MODE == l* ]]; then CP=8; elif true; then CP=4; else CP=1; fi\nrun $CP\n")),
            "path\n  run 8\n");
}

TEST(ShellModel, CaseArmsOnArgumentsAreReadAsCode) {
  EXPECT_EQ(render(run_text("TP=1\nwhile [ $# -gt 0 ]; do\n case \"$1\" in\n  --tensor-model-parallel-size) TP=\"$2\"; "
                            "shift 2;;\n  *) shift;;\n esac\ndone\nrun --tp $TP\n")),
            "path\n  run --tp <$TP: TP differs between branches (loop at line 2)>\n");
}

TEST(ShellModel, CaseOnAKnownValueTakesOneArm) {
  EXPECT_EQ(render(run_text("SIZE=7B\ncase $SIZE in\n 13B) L=40;;\n 7B|8B) L=32;;\n *) L=1;;\nesac\nrun $L\n")),
            "path\n  run 32\n");
}

TEST(ShellModel, ExitingPathsEnd) {
  EXPECT_EQ(render(run_text("if [ -z \"$1\" ]; then echo usage; exit 1; fi\nrun $1\n")),
            "path [not [ -z \"$1\" ]]\n  run <$1: positional parameter $1>\npath [[ -z \"$1\" ]] exits\n");
}

TEST(ShellModel, ArraysAndAppends) {
  EXPECT_EQ(render(run_text("A=(--a 1)\nA+=(--b \"x y\")\nB=()\nrun \"${A[@]}\" ${B[@]} ${#A[@]} ${A[1]}\n")),
            "path\n  run --a 1 --b x y 4~ 1\n");
}

TEST(ShellModel, ParameterOperators) {
  EXPECT_EQ(render(run_text("X=a=b=c\nE=\nrun ${X#*=} ${X##*=} ${X%=*} ${X%%=*} ${X/b/B} ${X^^} ${#X} ${X:2:3} ${E:+set} ${U:+set}\n")),
            "path\n  run b=c~ c~ a=b~ a~ a=B=c~ A=B=C~ 5~ b=c~ <${U:+set}: environment variable U (not set in the "
            "script)>\n");
}

TEST(ShellModel, ExportsAndPrefixesAreTheEnvironment) {
  EXPECT_EQ(render(run_text("export CUDA_DEVICE_MAX_CONNECTIONS=1\nNCCL_DEBUG=INFO run x\n")),
            "path\n  run x {CUDA_DEVICE_MAX_CONNECTIONS=1} {NCCL_DEBUG=INFO}\n");
}

TEST(ShellModel, FunctionsGetTheirArguments) {
  EXPECT_EQ(render(run_text("launch() {\n  local cp=$1\n  run --cp $cp \"$@\"\n}\nlaunch 4 --x\n")),
            "path\n  run --cp 4 4 --x\n");
}

TEST(ShellModel, SourcedFilesNextToTheScript) {
  const auto r = run_text("source \"$(dirname \"$0\")/common.sh\"\n. ./missing.sh\nrun $CP\n",
                          {{"dir/common.sh", "CP=8\n"}});
  EXPECT_EQ(render(r), "path\n  run 8\n");
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].what.find("cannot be read"), std::string::npos);
  ASSERT_EQ(r.sourced.size(), 1u);
}

TEST(ShellModel, ForLoopsOverKnownLists) {
  EXPECT_EQ(render(run_text("for cp in 2 4; do run $cp; done\n")), "path\n  run 2\n  run 4\n");
}

TEST(ShellModel, BashDashCAndEvalAreRead) {
  EXPECT_EQ(render(run_text("CMD=\"run --cp 2\"\neval $CMD\nbash -c \"$CMD --x\"\n$CMD\n")),
            "path\n  run --cp 2\n  run --cp 2 --x\n  run --cp 2\n");
}

TEST(ShellModel, SlurmHeadersSetTheEnvironment) {
  EXPECT_EQ(render(run_text("#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH -N 4\nrun $SLURM_NNODES\n")), "path\n  run 4~ {SLURM_JOB_NUM_NODES=4~} {SLURM_NNODES=4~}\n");
}

TEST(ShellModel, ContinuationsCommentsAndHeredocs) {
  EXPECT_EQ(render(run_text("run --a 1 \\\n  --b 2 # c\ncat <<EOF\n--cp 8\nEOF\nrun --c\n")),
            "path\n  run --a 1 --b 2\n  run --c\n");
}

TEST(ShellModel, TooManyPathsAreJoined) {
  std::string script;
  for (int i = 0; i < 8; ++i) script += "if [ -f f" + std::to_string(i) + " ]; then X" + std::to_string(i) + "=1; fi\n";
  script += "CP=4\nif [ -f g ]; then CP=2; fi\nrun $CP\n";
  const auto r = run_text(script);
  EXPECT_TRUE(r.joined);
  EXPECT_LE(r.paths.size(), 32u);
}

TEST(ShellModel, SyntaxErrorsAreSkippedAndTheRestIsRead) {
  const auto r = run_text("run a\nif then fi fi )\nrun b\n");
  EXPECT_FALSE(r.skipped.empty());
  EXPECT_NE(render(r).find("run b"), std::string::npos);
}

}  // namespace
}  // namespace hcp::lint

namespace hcp::lint {
namespace {

TEST(ShellModel, WordsAfterARedirectionBelongToTheCommand) {
  EXPECT_EQ(render(run_text("run -l <in a b >out c \\\n  --x 1\n")), "path\n  run -l a b c --x 1\n");
}

TEST(ShellModel, LauncherInFrontOfBashDashC) {
  const auto r = run_text("C=\"run --cp 2\"\nsrun -N 2 sh -c \"$C\"\n");
  EXPECT_EQ(render(r), "path\n  run --cp 2\n");
  ASSERT_EQ(r.paths[0].commands.size(), 1u);
  EXPECT_EQ(r.paths[0].commands[0].outer.size(), 3u);
}

TEST(ShellModel, TheSameConditionIsNotForkedTwice) {
  EXPECT_EQ(render(run_text("if [[ $B -eq 0 ]]; then X=1; fi\nif [[ $B -eq 0 ]]; then run a; else run b; fi\n")),
            "path [[[ $B -eq 0 ]]]\n  run a\npath [not [[ $B -eq 0 ]]]\n  run b\n");
}

TEST(ShellModel, ConditionsOnDefaultsGoBothWays) {
  // The default (empty) takes the exiting branch; on the other the environment gave A a value hcp cannot know.
  EXPECT_EQ(render(run_text("A=${A:-}\nif [ -z \"$A\" ]; then exit 1; fi\nrun $A\n")),
            "path [not [ -z \"$A\" ]]\n  run <: A is the environment's value where [ -z \"$A\" ] is false>\n"
            "path [[ -z \"$A\" ]] exits\n");
  // slime's run-qwen3-4B.sh: N=${N:-0} then `[ -z "$N" ] || [ "$N" -le 0 ]` sets 8; where it does not, N is the
  // environment's (not the default 0, which HCP023 read as --actor-num-gpus-per-node 0).
  EXPECT_EQ(render(run_text("N=${N:-0}\nif [ -z \"$N\" ] || [ \"$N\" -le 0 ]; then N=8; fi\nrun $N\n")),
            "path [[ -z \"$N\" ] || [ \"$N\" -le 0 ]]\n  run 8\n"
            "path [not [ -z \"$N\" ] || [ \"$N\" -le 0 ]]\n"
            "  run <: N is the environment's value where [ -z \"$N\" ] || [ \"$N\" -le 0 ] is false>\n");
}

TEST(ShellModel, WordsOfAMultiLineStringKeepTheirLines) {
  const auto r = run_text("A=\"--a 1\n    --cp 4\"\nrun $A\n");
  ASSERT_EQ(r.paths.size(), 1u);
  const auto& words = r.paths[0].commands[0].words;
  ASSERT_EQ(words.size(), 5u);
  EXPECT_EQ(words[3].loc.text(), "dir/job.sh:2:5");  // --cp
  EXPECT_EQ(words[4].loc.text(), "dir/job.sh:2:10");
}

TEST(ShellModel, DeepNestingIsRefusedNotRecursedInto) {
  const int depth = 20000;  // far past the limit: a recursive walk of it would exhaust the stack
  std::string subshells = std::string(depth, '(') + "run a" + std::string(depth, ')') + "\nrun b\n";
  EXPECT_NE(render(run_text(subshells)).find("run b"), std::string::npos);
  std::string defaults = "X=";
  for (int i = 0; i < depth; ++i) defaults += "${X:-";
  defaults += std::string(depth, '}') + "\nrun c\n";
  EXPECT_NE(render(run_text(defaults)).find("run c"), std::string::npos);
  std::string arithmetic = "run $((" + std::string(depth, '(') + "1" + std::string(depth, ')') + "))\n";
  (void)run_text(arithmetic);
}

TEST(ShellModel, DefaultsForTheEnvironmentAreDefaulted) {
  EXPECT_EQ(render(run_text("CP=${CP:-8}\nA=(--cp $CP)\nrun ${A[@]} \"$CP\"\n")), "path\n  run --cp 8? 8?\n");
}

}  // namespace
}  // namespace hcp::lint
