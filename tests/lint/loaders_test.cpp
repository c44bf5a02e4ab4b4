// Loaders: values, source positions, the shell subset of launch scripts, the override grammar, parse errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "hcp/error.hpp"
#include "hcp/lint/linter.hpp"
#include "hcp/lint/loaders.hpp"

namespace hcp::lint {
namespace {

using ::testing::HasSubstr;

ConfigTree load(const std::string& name, const std::string& text, InputFormat format = InputFormat::automatic) {
  ConfigTree tree;
  load_source(SourceText{name, text, format}, tree);
  return tree;
}

std::string parse_error(const std::string& name, const std::string& text) {
  try {
    load(name, text);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::parse);
    return e.what();
  }
  ADD_FAILURE() << "parsed without error";
  return "";
}

TEST(TomlLoader, DottedKeysValuesAndPositions) {
  const ConfigTree t = load("a.toml", "[model]\ncontext_parallel_size = 4\n  cp_comm_type = \"a2a+p2p\"\n"
                                      "hierarchical_context_parallel_sizes = [2, 2]\n[dist]\nuse_decentralized_pg = false\n");
  const Setting* cp = t.find("model.context_parallel_size");
  ASSERT_NE(cp, nullptr);
  EXPECT_EQ(cp->value.integer, 4);
  EXPECT_EQ(cp->key_loc.text(), "a.toml:2:1");
  EXPECT_EQ(t.find("model.cp_comm_type")->key_loc.text(), "a.toml:3:3");
  EXPECT_EQ(t.find("model.cp_comm_type")->value.text, "a2a+p2p");
  const Value& sizes = t.find("model.hierarchical_context_parallel_sizes")->value;
  ASSERT_EQ(sizes.kind, Value::Kind::list);
  EXPECT_EQ(sizes.display(), "[2, 2]");
  EXPECT_EQ(t.find("dist.use_decentralized_pg")->value.kind, Value::Kind::boolean);
}

TEST(TomlLoader, ErrorsNameThePosition) {
  EXPECT_THAT(parse_error("b.toml", "[model]\ncontext_parallel_size = = 4\n"), HasSubstr("b.toml:2:"));
  EXPECT_THAT(parse_error("b.toml", "[model]\ncontext_parallel_size = 99999999999999999999\n"), HasSubstr("b.toml:2:"));
  EXPECT_THAT(parse_error("c.toml", std::string("[model]\nx = \"\xff\xfe\"\n")), HasSubstr("c.toml:2:"));
}

TEST(YamlLoader, PlainAndQuotedScalarsAndPositions) {
  const ConfigTree t = load("a.yaml", "model:\n  context_parallel_size: 4\n  cp_comm_type: 'a2a+p2p'\n"
                                      "  seq_length: \"4096\"\n  hierarchical_context_parallel_sizes: ~\n");
  EXPECT_EQ(t.find("model.context_parallel_size")->value.kind, Value::Kind::integer);
  EXPECT_EQ(t.find("model.context_parallel_size")->key_loc.text(), "a.yaml:2:3");
  EXPECT_EQ(t.find("model.seq_length")->value.kind, Value::Kind::string);  // quoted stays a string
  EXPECT_EQ(t.find("model.hierarchical_context_parallel_sizes")->value.kind, Value::Kind::null);
}

TEST(YamlLoader, ErrorsNameThePosition) {
  EXPECT_THAT(parse_error("d.yaml", "model:\n  cp: [1, 2\n"), HasSubstr("d.yaml:"));
  EXPECT_THAT(parse_error("e.yaml", "- just\n- a list\n"), HasSubstr("must be a mapping"));
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += std::string(static_cast<size_t>(i) * 2, ' ') + "k" + std::to_string(i) + ":\n";
  EXPECT_THAT(parse_error("f.yaml", deep), HasSubstr("deeper than"));
}

// Aliases of aliases (an "alias bomb": 10 levels of 10 in 500 bytes are 10^10 values) stop at the value budget
// with a parse error (HCP000), in bounded time and memory (issue 54, item 1); the same file without the last
// levels, within the budget, still loads.
TEST(YamlLoader, AliasBombStopsAtTheValueBudget) {
  auto bomb = [](int levels) {
    std::string y = "model:\n  a0: &a0 [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n";
    for (int i = 1; i < levels; ++i) {
      y += "  a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
      for (int j = 0; j < 10; ++j) y += (j ? ", *a" : "*a") + std::to_string(i - 1);
      y += "]\n";
    }
    return y + "  context_parallel_size: 2\n";
  };
  EXPECT_THAT(parse_error("bomb.yaml", bomb(10)), HasSubstr("expands to more than 200000 values"));
  EXPECT_EQ(load("ok.yaml", bomb(4)).find("model.context_parallel_size")->value.integer, 2);  // 11110 values
}

TEST(OverridesLoader, HydraGrammar) {
  ConfigTree t;
  load_overrides({"model.context_parallel_size=4", "model.cp_comm_type=a2a+p2p",
                  "model.hierarchical_context_parallel_sizes=[2, 2]", "++model.x='quoted, with comma'",
                  "+dist.use_decentralized_pg=false", "model.window_size=[[1,2],[3,4]]", "model.n=null"},
                 {{"<o>", 1, 1}, {"<o>", 2, 1}, {"<o>", 3, 1}, {"<o>", 4, 1}, {"<o>", 5, 1}, {"<o>", 6, 1}, {"<o>", 7, 1}},
                 t);
  EXPECT_EQ(t.find("model.context_parallel_size")->value.integer, 4);
  EXPECT_EQ(t.find("model.cp_comm_type")->value.text, "a2a+p2p");
  EXPECT_EQ(t.find("model.hierarchical_context_parallel_sizes")->value.display(), "[2, 2]");
  EXPECT_EQ(t.find("model.x")->value.text, "quoted, with comma");
  EXPECT_EQ(t.find("model.x")->key_loc.col, 3);
  EXPECT_EQ(t.find("dist.use_decentralized_pg")->value.kind, Value::Kind::boolean);
  EXPECT_EQ(t.find("model.window_size")->value.items.size(), 2u);
  EXPECT_EQ(t.find("model.n")->value.kind, Value::Kind::null);
  load_overrides({"~model.x"}, {{"<o>", 8, 1}}, t);
  EXPECT_EQ(t.find("model.x"), nullptr);
}

TEST(OverridesLoader, Errors) {
  ConfigTree t;
  auto bad = [&](const std::string& o) {
    try {
      load_overrides({o}, {{"<o>", 3, 1}}, t);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(bad("model.cp"), HasSubstr("<o>:3:1: override 'model.cp' has no '=value'"));
  EXPECT_THAT(bad("=4"), HasSubstr("invalid override"));
  EXPECT_THAT(bad("model.x=[1,2"), HasSubstr("missing ']'"));
  EXPECT_THAT(bad("model.x='abc"), HasSubstr("unterminated"));
  EXPECT_THAT(bad("model.x=[1,,2]"), HasSubstr("empty list entry"));
  EXPECT_THAT(bad("model.x=" + std::string(100, '[')), HasSubstr("nested deeper"));
}

TEST(MegatronLoader, FlagsVariablesArraysAndContinuations) {
  const std::string script =
      "#!/bin/bash\n"
      "export CUDA_DEVICE_MAX_CONNECTIONS=1\n"
      "CP=${CP:-8}\n"
      "SIZES=\"2 4\"\n"
      "ARGS=(\n"
      "  --context-parallel-size $CP  # trailing comment\n"
      "  --cp-comm-type 'a2a+p2p'\n"
      ")\n"
      "torchrun --nproc_per_node=8 --nnodes 4 pretrain_gpt.py \\\n"
      "    ${ARGS[@]} --hierarchical-context-parallel-sizes $SIZES \\\n"
      "    --window-size -1 0 --use-tp-pp-dp-mapping --seq-length=$SEQ\n";
  const ConfigTree t = load("run.sh", script);
  ASSERT_NE(t.find("model.context_parallel_size"), nullptr);
  EXPECT_EQ(t.find("model.context_parallel_size")->value.integer, 8);
  EXPECT_EQ(t.find("model.context_parallel_size")->key_loc.text(), "run.sh:6:3");
  EXPECT_EQ(t.find("model.cp_comm_type")->value.text, "a2a+p2p");
  EXPECT_EQ(t.find("model.cp_comm_type")->value.kind, Value::Kind::string);
  const Value& sizes = t.find("model.hierarchical_context_parallel_sizes")->value;
  EXPECT_EQ(sizes.display(), "[2, 4]");
  EXPECT_EQ(sizes.items[0].loc.text(), "run.sh:4:8");  // the words of $SIZES sit in its assignment
  EXPECT_EQ(t.find("model.window_size")->value.display(), "[-1, 0]");
  EXPECT_TRUE(t.find("dist.use_tp_pp_dp_mapping")->value.boolean);
  EXPECT_EQ(t.find("cluster.gpus_per_node")->value.integer, 8);
  EXPECT_EQ(t.find("cluster.nodes")->value.integer, 4);
  EXPECT_EQ(t.find("env.CUDA_DEVICE_MAX_CONNECTIONS")->value.text, "1");
  // $SEQ is not defined in the script: unknown, with the reason.
  ASSERT_NE(t.find("model.seq_length"), nullptr);
  EXPECT_EQ(t.find("model.seq_length")->provenance, Provenance::unknown);
  EXPECT_EQ(t.find("model.seq_length")->value.kind, Value::Kind::null);
  EXPECT_THAT(t.find("model.seq_length")->why, HasSubstr("environment variable SEQ"));
  // ${CP:-8}: 8 unless the environment sets CP.
  EXPECT_EQ(t.find("model.context_parallel_size")->provenance, Provenance::defaulted);
}

TEST(MegatronLoader, MultipleCommTypesAreAPerLayerList) {
  const ConfigTree t = load("x.args", "--num-layers 2 --cp-comm-type p2p a2a+p2p --context-parallel-size 4\n");
  EXPECT_EQ(t.find("model.cp_comm_type")->value.kind, Value::Kind::list);
  EXPECT_EQ(t.find("model.cp_comm_type")->value.items.size(), 2u);
}

// A flag name alone is common in real scripts (a `case` arm `--tensor-model-parallel-size)`, a flag at the end of
// a line whose value follows elsewhere): nothing to lint, never an input error.
TEST(MegatronLoader, AFlagWithoutItsValueIsNotAnInputError) {
  EXPECT_NO_THROW(load("y.sh", "python pretrain_gpt.py --context-parallel-size\n"));
  const ConfigTree t = load("z.sh", "case $1 in\n  --tensor-model-parallel-size) TP=$2;;\nesac\n"
                                    "python pretrain_gpt.py --tensor-model-parallel-size $TP --micro-batch-size 1\n");
  ASSERT_NE(t.find("model.tensor_model_parallel_size"), nullptr);
  EXPECT_EQ(t.find("model.tensor_model_parallel_size")->provenance, Provenance::unknown);
}

TEST(MegatronLoader, BinaryGarbageDoesNotCrash) {
  std::string junk;
  for (int i = 0; i < 4096; ++i) junk += static_cast<char>((i * 7919) % 256);
  ConfigTree t;
  try {
    load_megatron_args(SourceText{"junk.sh", junk, InputFormat::megatron}, t);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::parse);
  }
}

TEST(FormatDetection, ByExtensionThenContent) {
  EXPECT_EQ(detect_format("a.toml", ""), InputFormat::toml);
  EXPECT_EQ(detect_format("a.yml", ""), InputFormat::yaml);
  EXPECT_EQ(detect_format("run.sbatch", ""), InputFormat::megatron);
  EXPECT_EQ(detect_format("cfg", "[model]\ncp = 1\n"), InputFormat::toml);
  EXPECT_EQ(detect_format("cfg", "model:\n  cp: 1\n"), InputFormat::yaml);
  EXPECT_EQ(detect_format("cfg", "#!/bin/bash\nexport X=1\n"), InputFormat::megatron);
  EXPECT_EQ(detect_format("cfg", "# c\nmodel.context_parallel_size=4\n"), InputFormat::overrides);
}

}  // namespace
}  // namespace hcp::lint

namespace hcp::lint {
namespace {

LoadedInput input(const std::string& name, const std::string& text) {
  return load_input(SourceText{name, text, InputFormat::automatic});
}

TEST(FunctionalTestLoader, ModelArgsAsTheHarnessBuildsThem) {
  const LoadedInput in = input("model_config.yaml",
                               "ENV_VARS:\n  CUDA_DEVICE_MAX_CONNECTIONS: 32\nTEST_TYPE: regular\nMODEL_ARGS:\n"
                               "  --context-parallel-size: 4\n  --cp-comm-type: a2a+p2p\n"
                               "  --hierarchical-context-parallel-sizes: \"[2 2]\"\n  --use-tp-pp-dp-mapping: true\n"
                               "  --sequence-parallel: false\n  --window-size: \"\"\nMODEL_ARGS_2:\n"
                               "  --context-parallel-size: 2\n");
  ASSERT_FALSE(in.skipped);
  ASSERT_EQ(in.variants.size(), 2u);  // the first run and the resumed one
  const ConfigTree& t = in.variants[0].tree;
  EXPECT_EQ(t.find("model.context_parallel_size")->value.integer, 4);
  EXPECT_EQ(t.find("model.hierarchical_context_parallel_sizes")->value.display(), "[2, 2]");  // [ ] split
  EXPECT_TRUE(t.find("dist.use_tp_pp_dp_mapping")->value.boolean);
  EXPECT_EQ(t.find("model.sequence_parallel"), nullptr);  // false passes nothing
  EXPECT_EQ(t.find("model.window_size"), nullptr);        // nor does an empty value
  EXPECT_EQ(t.find("env.CUDA_DEVICE_MAX_CONNECTIONS")->value.text, "32");
  EXPECT_EQ(t.find("cluster.world_size")->provenance, Provenance::unknown);  // the CI recipe's
  EXPECT_EQ(in.variants[1].tree.find("model.context_parallel_size")->value.integer, 2);
  // A value with spaces is one word, as the harness quotes it: argparse's int type refuses "2 2".
  const LoadedInput spaced = input("m.yaml", "MODEL_ARGS:\n  --hierarchical-context-parallel-sizes: 2 2\n");
  EXPECT_EQ(spaced.variants[0].tree.find("model.hierarchical_context_parallel_sizes")->value.display(), "['2 2']");
}

TEST(NemoLauncherLoader, MappedKeysAndInterpolationsInsideTheFile) {
  const LoadedInput in = input("conf/training/gpt3/5b.yaml",
                               "run:\n  name: x\ntrainer:\n  num_nodes: 2\n  devices: 8\nexp_manager: {}\nmodel:\n"
                               "  tensor_model_parallel_size: 2\n  context_parallel_size: 2\n"
                               "  encoder_seq_length: ${training.model.data.seq_length}\n  data:\n    seq_length: 8192\n"
                               "  pipeline_model_parallel_size: ${base.pp}\n  optim:\n    name: fused_adam\n");
  ASSERT_EQ(in.variants.size(), 1u);
  const ConfigTree& t = in.variants[0].tree;
  EXPECT_EQ(t.find("cluster.nodes")->value.integer, 2);
  EXPECT_EQ(t.find("cluster.gpus_per_node")->value.integer, 8);
  EXPECT_EQ(t.find("model.seq_length")->value.integer, 8192);  // ${training.x} is this file's x
  EXPECT_EQ(t.find("model.pipeline_model_parallel_size")->provenance, Provenance::unknown);
  EXPECT_EQ(t.find("model.optim.name"), nullptr);  // NeMo's own keys are not judged
  EXPECT_EQ(t.find("env.CUDA_DEVICE_MAX_CONNECTIONS")->value.text, "1");  // the launcher sets it
}

TEST(YamlForms, OtherYamlIsSkippedWithWhatItWasTakenFor) {
  EXPECT_THAT(input("cluster.yaml", "partition: batch\ngpus_per_node: 8\n").skipped.value_or(""),
              HasSubstr("top-level keys: partition, gpus_per_node"));
  EXPECT_THAT(input("env.yaml", "- name: gsm8k\n  path: x\n").skipped.value_or(""), HasSubstr("a YAML list"));
  EXPECT_FALSE(input("bridge.yaml", "model:\n  context_parallel_size: 2\n").skipped);
}

TEST(ScriptLoader, BridgeOverridesAfterThePythonProgram) {
  const LoadedInput in = input("run.sh",
                               "CP=${CP:-4}\ntorchrun --nproc_per_node=8 scripts/training/run_recipe.py --recipe x "
                               "model.context_parallel_size=$CP model.cp_comm_type=a2a+p2p dataset.seq_length=$SEQ\n");
  ASSERT_EQ(in.variants.size(), 1u);
  const ConfigTree& t = in.variants[0].tree;
  EXPECT_EQ(t.find("model.context_parallel_size")->value.integer, 4);
  EXPECT_EQ(t.find("model.context_parallel_size")->provenance, Provenance::defaulted);
  EXPECT_EQ(t.find("model.cp_comm_type")->value.text, "a2a+p2p");
  EXPECT_EQ(t.find("dataset.seq_length")->provenance, Provenance::unknown);
  EXPECT_EQ(t.find("cluster.gpus_per_node")->value.integer, 8);
}

TEST(ScriptLoader, LaunchersGiveTheCluster) {
  auto cluster = [](const std::string& script) {
    const LoadedInput in = input("job.sh", script);
    if (in.variants.empty()) return std::string("skipped");
    const ConfigTree& t = in.variants[0].tree;
    std::string out;
    for (const char* k : {"cluster.nodes", "cluster.gpus_per_node", "cluster.world_size"}) {
      const Setting* s = t.find(k);
      out += std::string(k + 8) + "=" + (!s ? "-" : s->provenance == Provenance::unknown ? "?" : s->value.display()) + " ";
    }
    return out;
  };
  const std::string train = " pretrain_gpt.py --micro-batch-size 1\n";
  EXPECT_EQ(cluster("torchrun --nproc_per_node 8" + train), "nodes=1 gpus_per_node=8 world_size=- ");
  EXPECT_EQ(cluster("torchrun --standalone --nproc-per-node=4" + train), "nodes=1 gpus_per_node=4 world_size=- ");
  EXPECT_EQ(cluster("torchrun --nnodes 1:4 --nproc_per_node 8" + train), "nodes=? gpus_per_node=8 world_size=- ");
  EXPECT_EQ(cluster("torchrun --nnodes $N --nproc_per_node 8" + train), "nodes=? gpus_per_node=8 world_size=- ");
  EXPECT_EQ(cluster("python -m torch.distributed.run --nnodes 2 --nproc_per_node 8" + train),
            "nodes=2 gpus_per_node=8 world_size=- ");
  EXPECT_EQ(cluster("#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=8\nsrun python" + train),
            "nodes=4 gpus_per_node=8 world_size=- ");
  EXPECT_EQ(cluster("#SBATCH -N 2\nsrun torchrun --nnodes $SLURM_NNODES --nproc_per_node 8" + train),
            "nodes=2 gpus_per_node=8 world_size=- ");
  EXPECT_EQ(cluster("mpirun -np 16 python" + train), "nodes=- gpus_per_node=- world_size=16 ");
  EXPECT_EQ(cluster("deepspeed --num_gpus 8 --num_nodes 2" + train), "nodes=2 gpus_per_node=8 world_size=- ");
  EXPECT_EQ(cluster("python" + train), "nodes=- gpus_per_node=- world_size=- ");
  EXPECT_EQ(cluster("NNODES=2 NPROC_PER_NODE=4 megatron sft --tensor_model_parallel_size 2 --micro_batch_size 1\n"),
            "nodes=2 gpus_per_node=4 world_size=- ");
  EXPECT_EQ(cluster("echo torchrun --nproc_per_node 8" + train), "skipped");
}

TEST(ScriptLoader, NemoTwoOverrides) {
  const LoadedInput in = input("n.sh", "nemo llm pretrain --factory llama3_8b trainer.strategy.context_parallel_size=2 "
                                       "trainer.num_nodes=2 trainer.devices=8 trainer.max_steps=10 "
                                       "model.config.seq_length=8192 -y\n");
  ASSERT_EQ(in.variants.size(), 1u);
  const ConfigTree& t = in.variants[0].tree;
  EXPECT_EQ(t.find("model.context_parallel_size")->value.integer, 2);
  EXPECT_EQ(t.find("model.context_parallel_size")->spelled, "trainer.strategy.context_parallel_size");
  EXPECT_EQ(t.find("cluster.nodes")->value.integer, 2);
  EXPECT_EQ(t.find("model.seq_length")->value.integer, 8192);
  EXPECT_EQ(t.find("trainer.max_steps"), nullptr);  // NeMo's own
}

TEST(YamlCfgLoader, MegatronYamlArguments) {
  const LoadedInput in = input("gpt_config.yaml",
                               "language_model:\n  num_layers: 24\n  num_attention_heads: 16\n  num_query_groups: 4\n"
                               "model_parallel:\n  tensor_model_parallel_size: 2\n  context_parallel_size: 2\n"
                               "seq_length: 4096\ngroup_query_attention: false\n");
  ASSERT_EQ(in.variants.size(), 1u);
  const ConfigTree& t = in.variants[0].tree;
  EXPECT_EQ(t.find("model.context_parallel_size")->value.integer, 2);
  EXPECT_EQ(t.find("model.num_layers")->value.integer, 24);
  EXPECT_EQ(t.find("model.seq_length")->value.integer, 4096);
  EXPECT_EQ(t.find("model.num_query_groups"), nullptr);  // without group_query_attention
}

TEST(ScriptLoader, SkipReasonsSayWhatTheScriptDoes) {
  EXPECT_THAT(input("a.sh", "IMG=\"\"\nif [ -z \"$IMG\" ]; then exit 1; fi\ntorchrun x.py --micro-batch-size 1\n")
                  .skipped.value_or(""),
              HasSubstr("exits on every path"));
  EXPECT_THAT(input("b.sh", "python scripts/training/run_recipe.py --recipe llama3_8b\n").skipped.value_or(""),
              HasSubstr("(scripts/training/run_recipe.py) get no Megatron-LM training flags"));
  EXPECT_THAT(input("c.sh", "echo hello\nmkdir -p out\n").skipped.value_or(""), HasSubstr("launches no Megatron"));
}

TEST(ScriptLoader, RayRuntimeEnvironment) {
  const LoadedInput in = input(
      "ray.sh", "ray job submit --runtime-env-json='{\"env_vars\": {\"CUDA_DEVICE_MAX_CONNECTIONS\": \"1\"}}' -- "
                "python3 train.py --micro-batch-size 1 --context-parallel-size 2\n");
  ASSERT_EQ(in.variants.size(), 1u);
  EXPECT_EQ(in.variants[0].tree.find("env.CUDA_DEVICE_MAX_CONNECTIONS")->value.text, "1");
}

// Form detection never guesses (issue 51): each loader claims a file only by positive evidence of its form. The four
// misdetections found on real files, each as it was met.
TEST(FormDetection, OtherToolsFilesAreSkippedWithWhatTheyAre) {
  // torchtitan's TOML was linted as a Bridge tree (84 false HCP022 on its train_configs): a TOML of other tables
  // is skipped with them, and torchtitan's own ([job] beside [training]) is read by its loader.
  const LoadedInput project = input("pyproject.toml", "[project]\nname = \"x\"\n[model]\nname = \"llama3\"\n");
  ASSERT_TRUE(project.skipped);
  EXPECT_EQ(*project.skipped, "a TOML file of none of the training-config forms hcp-lint reads (top-level keys: model, "
                            "project)");
  const LoadedInput titan = input("llama3_8b.toml",
                                  "[job]\ndump_folder = \"./outputs\"\n[model]\nname = \"llama3\"\n"
                                  "[training]\nseq_len = 8192\n[parallelism]\ncontext_parallel_degree = 8\n"
                                  "data_parallel_shard_degree = 2\ncontext_parallel_rotate_method = \"alltoall\"\n");
  ASSERT_FALSE(titan.skipped);
  ASSERT_EQ(titan.variants.size(), 1u);
  const ConfigTree& tt = titan.variants[0].tree;
  EXPECT_EQ(tt.find("model.context_parallel_size")->value.integer, 8);
  EXPECT_EQ(tt.find("model.seq_length")->value.integer, 8192);
  EXPECT_EQ(tt.find("model.cp_comm_type")->value.text, "p2p");  // alltoall passes K/V round the ring
  EXPECT_EQ(tt.find("cluster.world_size")->value.integer, 16);   // 1 x 2 x 1 x 1 x 8
  EXPECT_EQ(tt.find("model.key"), nullptr);
  EXPECT_EQ(tt.find("framework.attention")->value.text, "torchtitan");
  EXPECT_FALSE(input("bridge.toml", "[model]\ncontext_parallel_size = 2\n[cluster]\nnodes = 1\n").skipped);
  // NeMo-RL's key=value arguments: its logger.* was read as Bridge's logger section. NeMo-RL's reader claims them
  // now (its policy section), and another program's foreign sections are still skipped.
  const LoadedInput rl = input("grpo.sh", "uv run python examples/run_grpo_math.py policy.megatron_cfg.enabled=True "
                                          "logger.wandb_enabled=True cluster.gpus_per_node=8\n");
  ASSERT_FALSE(rl.skipped);
  ASSERT_EQ(rl.variants.size(), 1u);
  EXPECT_EQ(rl.variants[0].role, "NeMo-RL policy");
  EXPECT_EQ(rl.variants[0].tree.find("model.logger.wandb_enabled"), nullptr);
  const LoadedInput other = input("other.sh", "python train.py policy.lr=1 logger.wandb_enabled=True\n");
  ASSERT_TRUE(other.skipped);
  EXPECT_NE(other.skipped->find("overrides of sections that are not Megatron-Bridge's or NeMo 2's (policy)"),
            std::string::npos)
      << *other.skipped;
  EXPECT_FALSE(input("bridge.sh", "python scripts/training/run_recipe.py --recipe llama3_8b "
                                  "model.context_parallel_size=2 logger.log_interval=1\n").skipped);
  // DeepSpeed's JSON (and the same as a .yaml) passed the YAML form check.
  const std::string deepspeed = "{\n  \"train_batch_size\": 8,\n  \"zero_optimization\": {\"stage\": 2}\n}\n";
  for (const char* name : {"ds_config.json", "ds_config.yaml"}) {
    const LoadedInput ds = input(name, deepspeed);
    ASSERT_TRUE(ds.skipped) << name;
    EXPECT_EQ(*ds.skipped, "a JSON or JSON-style YAML file of none of the training-config forms hcp-lint reads "
                           "(top-level keys: train_batch_size, zero_optimization)");
  }
  const LoadedInput flow = input("flow.yaml", "---\n{model: {context_parallel_size: 2}}\n");
  ASSERT_FALSE(flow.skipped);
  EXPECT_EQ(flow.variants[0].tree.find("model.context_parallel_size")->value.integer, 2);
  // NeMo 2's partial(recipe, ...)(...) was read only when its result was named `recipe` (or the like).
  const LoadedInput nemo = input("nemo2.py", "from functools import partial\nfrom nemo.collections import llm\n"
                                             "job = partial(llm.llama3_8b.pretrain_recipe, num_nodes=2, "
                                             "num_gpus_per_node=8)()\n"
                                             "job.trainer.strategy.context_parallel_size = 4\n");
  ASSERT_FALSE(nemo.skipped) << *nemo.skipped;
  ASSERT_EQ(nemo.variants.size(), 1u);
  EXPECT_EQ(nemo.variants[0].tree.find("model.context_parallel_size")->value.integer, 4);
  EXPECT_EQ(nemo.variants[0].tree.find("cluster.nodes")->value.integer, 2);
}

TEST(ScriptLoader, PerformanceScriptFlagsOnlyForBridgePerformanceScripts) {
  const LoadedInput perf = input("p.sh", "python scripts/performance/setup_experiment.py -ng 64 -gn 8 -tp 2 -cp 4\n");
  ASSERT_EQ(perf.variants.size(), 1u);
  EXPECT_EQ(perf.variants[0].tree.find("model.context_parallel_size")->value.integer, 4);
  EXPECT_EQ(perf.variants[0].tree.find("cluster.world_size")->value.integer, 64);
  EXPECT_TRUE(input("q.sh", "python convert.py -cp 4 --micro_batch_size 2\n").skipped);
}

TEST(FrameworkLaunch, VerlWorkersEachALaunchOfTheirOwn) {
  // verl/trainer/ppo/utils.py: a ref worker with the KL loss, a critic for the GAE estimator (the default);
  // ref.megatron.* inherit the actor's (${oc.select:actor_rollout_ref.actor.megatron...}).
  const LoadedInput ppo = input("ppo.sh",
                                "python3 -m verl.trainer.main_ppo --config-path=config "
                                "--config-name='ppo_megatron_trainer.yaml' "
                                "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2 "
                                "actor_rollout_ref.actor.megatron.context_parallel_size=4 "
                                "+actor_rollout_ref.actor.megatron.override_transformer_config.cp_comm_type=a2a+p2p "
                                "actor_rollout_ref.actor.use_kl_loss=True "
                                "actor_rollout_ref.ref.megatron.context_parallel_size=2 "
                                "critic.megatron.context_parallel_size=8 trainer.nnodes=2 trainer.n_gpus_per_node=8\n");
  ASSERT_FALSE(ppo.skipped);
  ASSERT_EQ(ppo.variants.size(), 3u);
  const auto cp = [](const ConfigVariant& v) { return v.tree.find("model.context_parallel_size")->value.integer; };
  EXPECT_EQ(ppo.variants[0].role, "verl actor");
  EXPECT_EQ(cp(ppo.variants[0]), 4);
  EXPECT_EQ(ppo.variants[0].tree.find("model.cp_comm_type")->value.text, "a2a+p2p");
  EXPECT_EQ(ppo.variants[0].tree.find("model.cp_comm_type")->spelled,
            "actor_rollout_ref.actor.megatron.override_transformer_config.cp_comm_type");
  EXPECT_EQ(ppo.variants[0].tree.find("cluster.nodes")->value.integer, 2);
  // Colocated workers run on the actor's process groups (megatron_workers.py initialises them once): the ref's
  // and the critic's own sizes are kept as ignored.* for HCP027.
  EXPECT_EQ(ppo.variants[1].role, "verl ref");
  EXPECT_EQ(cp(ppo.variants[1]), 4);
  EXPECT_EQ(ppo.variants[1].tree.find("ignored.model.context_parallel_size")->value.integer, 2);
  EXPECT_EQ(ppo.variants[1].tree.find("model.cp_comm_type")->value.text, "a2a+p2p");  // the actor's overrides
  EXPECT_EQ(ppo.variants[2].role, "verl critic");
  EXPECT_EQ(cp(ppo.variants[2]), 4);
  EXPECT_EQ(ppo.variants[2].tree.find("ignored.model.context_parallel_size")->value.integer, 8);
  EXPECT_EQ(ppo.variants[2].tree.find("model.tensor_model_parallel_size")->value.integer, 2);
  EXPECT_EQ(ppo.variants[2].tree.find("model.cp_comm_type"), nullptr);  // megatron_critic.yaml's own
  EXPECT_NE(ppo.variants[0].unit, ppo.variants[2].unit);

  // GRPO has no critic; verl's defaults give the world size; FSDP makes no Megatron launch.
  const LoadedInput grpo = input("grpo.sh", "python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer "
                                            "algorithm.adv_estimator=grpo "
                                            "actor_rollout_ref.actor.megatron.context_parallel_size=2\n");
  ASSERT_EQ(grpo.variants.size(), 1u);
  EXPECT_EQ(grpo.variants[0].tree.find("cluster.gpus_per_node")->value.integer, 8);
  EXPECT_TRUE(grpo.variants[0].tree.find("cluster.gpus_per_node")->implied);
  EXPECT_EQ(grpo.variants[0].tree.find("cluster.nodes")->value.integer, 1);
  const LoadedInput fsdp = input("fsdp.sh", "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo "
                                            "actor_rollout_ref.actor.fsdp_config.param_offload=True\n");
  ASSERT_TRUE(fsdp.skipped);
  EXPECT_NE(fsdp.skipped->find("verl with the FSDP strategy"), std::string::npos) << *fsdp.skipped;
  // A config of the user's own: what the script does not set is that file's.
  const LoadedInput own = input("own.sh", "python3 -m verl.trainer.main_ppo --config-path=/cfg --config-name=mine "
                                          "actor_rollout_ref.actor.megatron.context_parallel_size=2\n");
  ASSERT_EQ(own.variants.size(), 2u);  // actor, and the critic of the default GAE estimator
  EXPECT_EQ(own.variants[0].tree.find("cluster.nodes"), nullptr);
  EXPECT_FALSE(own.variants[0].base.empty());
}

}  // namespace
}  // namespace hcp::lint

namespace hcp::lint {
namespace {

// `source` reads only files inside the linted script's folder: an absolute path, `../` and a link leading out are
// never opened, whatever they would set (here the CP size that decides the finding), and say why.
TEST(FrameworkLaunch, NemoRlDefaultsInheritanceAndOverrides) {
  // nemo_rl/utils/config.py load_config: defaults relative to the file, parents in order, the file wins, lists
  // replaced, `_override_: true` replaces a section; parents only inside the working directory.
  namespace fs = std::filesystem;
  const fs::path before = fs::current_path();
  const fs::path top = fs::temp_directory_path() / ("hcp-nemo-rl-" + std::to_string(::getpid()));
  fs::remove_all(top);
  fs::create_directories(top / "repo" / "examples" / "configs" / "recipes");
  fs::create_directories(top / "repo" / "tests" / "functional");
  auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  write(top / "outside.yaml", "policy:\n  megatron_cfg:\n    context_parallel_size: 64\n");
  write(top / "repo" / "examples" / "configs" / "base.yaml",
        "policy:\n  dtensor_cfg:\n    enabled: true\n  megatron_cfg:\n    enabled: false\n"
        "    tensor_model_parallel_size: 1\n    context_parallel_size: 1\n    pipeline_model_parallel_size: 1\n"
        "  generation:\n    colocated:\n      enabled: true\n"
        "cluster:\n  gpus_per_node: 1\n  num_nodes: 1\n");
  write(top / "repo" / "examples" / "configs" / "recipes" / "cp4.yaml",
        "defaults: ../base.yaml\npolicy:\n  dtensor_cfg:\n    enabled: false\n  megatron_cfg:\n    enabled: true\n"
        "    context_parallel_size: 4\n    tensor_model_parallel_size: ${.context_parallel_size}\n"
        "    model_overrides:\n      cp_comm_type: a2a\n"
        "cluster:\n  gpus_per_node: 8\n  num_nodes: 2\n");
  write(top / "repo" / "examples" / "configs" / "recipes" / "escape.yaml",
        "defaults: ../../../../outside.yaml\npolicy:\n  megatron_cfg:\n    enabled: true\ncluster:\n  num_nodes: 1\n");
  write(top / "repo" / "tests" / "functional" / "run.sh",
        "uv run examples/run_grpo.py --config examples/configs/recipes/cp4.yaml "
        "policy.megatron_cfg.context_parallel_size=2 policy.generation.colocated.enabled=false "
        "policy.generation.colocated.resources.num_nodes=1\n");
  fs::current_path(top / "repo");
  const auto load = [](const std::string& path) { return load_input(read_source(path)); };
  const LoadedInput yaml = load("examples/configs/recipes/cp4.yaml");
  const LoadedInput escape = load("examples/configs/recipes/escape.yaml");
  const LoadedInput base = load("examples/configs/base.yaml");
  const LoadedInput script = load("tests/functional/run.sh");
  // A --config outside the working directory is never opened, named absolutely or through ../.
  const std::string outside = (top / "outside.yaml").string();
  const LoadedInput absolute = load_input(SourceText{"tests/functional/abs.sh",
                                                     "uv run examples/run_grpo.py --config " + outside + "\n",
                                                     InputFormat::megatron});
  const LoadedInput relative = load_input(SourceText{"tests/functional/rel.sh",
                                                     "uv run examples/run_grpo.py --config ../outside.yaml\n",
                                                     InputFormat::megatron});
  fs::current_path(before);
  fs::remove_all(top);

  ASSERT_EQ(yaml.variants.size(), 1u);
  const ConfigTree& t = yaml.variants[0].tree;
  EXPECT_EQ(yaml.variants[0].role, "NeMo-RL policy");
  EXPECT_EQ(t.find("model.context_parallel_size")->value.integer, 4);
  EXPECT_EQ(t.find("model.tensor_model_parallel_size")->value.integer, 4);  // ${.context_parallel_size}
  EXPECT_EQ(t.find("model.pipeline_model_parallel_size")->key_loc.file, "examples/configs/base.yaml");
  EXPECT_EQ(t.find("model.cp_comm_type")->value.text, "a2a");
  EXPECT_EQ(t.find("cluster.nodes")->value.integer, 2);
  ASSERT_EQ(yaml.sourced.size(), 1u);  // base.yaml, for findings that point there
  // A parent outside the working directory is never opened: what it would set stays unknown.
  ASSERT_EQ(escape.unread.size(), 1u);
  EXPECT_NE(escape.unread[0].second.find("outside the working directory"), std::string::npos) << escape.unread[0].second;
  ASSERT_EQ(escape.variants.size(), 1u);
  EXPECT_EQ(escape.variants[0].tree.find("model.context_parallel_size"), nullptr);
  EXPECT_NE(escape.variants[0].base.find("not read"), std::string::npos);
  // The DTensor backend makes no Megatron launch.
  ASSERT_TRUE(base.skipped);
  EXPECT_NE(base.skipped->find("DTensor"), std::string::npos);
  // A script's --config is found from its folder upwards; overrides win; non-colocated generation takes its nodes.
  ASSERT_EQ(script.variants.size(), 1u);
  EXPECT_EQ(script.variants[0].tree.find("model.context_parallel_size")->value.integer, 2);
  EXPECT_EQ(script.variants[0].tree.find("cluster.world_size")->value.integer, 8);  // (2 - 1) nodes x 8
  for (const LoadedInput* in : {&absolute, &relative}) {
    ASSERT_EQ(in->unread.size(), 1u);
    EXPECT_NE(in->unread[0].second.find("outside the working directory"), std::string::npos) << in->unread[0].second;
    EXPECT_TRUE(in->sourced.empty());
  }
  // PPO's value model runs on the policy's train GPUs (ppo.py init_value); NeMo-Gym with num_gpu_nodes 0 takes none.
  const LoadedInput ppo = input("ppo.yaml",
                                "policy:\n  megatron_cfg:\n    enabled: true\n  generation:\n    colocated:\n"
                                "      enabled: false\n      resources:\n        num_nodes: 1\n        gpus_per_node: 8\n"
                                "value:\n  megatron_cfg:\n    enabled: true\n"
                                "env:\n  nemo_gym:\n    num_gpu_nodes: 0\n"
                                "cluster:\n  gpus_per_node: 8\n  num_nodes: 2\n");
  ASSERT_EQ(ppo.variants.size(), 2u);
  EXPECT_EQ(ppo.variants[0].tree.find("cluster.world_size")->value.integer, 8);
  EXPECT_EQ(ppo.variants[1].role, "NeMo-RL value model");
  EXPECT_EQ(ppo.variants[1].tree.find("cluster.world_size")->value.integer, 8);
}

TEST(FrameworkLaunch, RollWorkersAndArealAllocations) {
  // ROLL: each megatron_train / megatron_infer worker on the GPUs of its device_mapping; the sequence length is
  // prompt_length + response_length.
  const LoadedInput roll = input("rlvr.yaml",
                                 "prompt_length: 2048\nresponse_length: 4096\n"
                                 "actor_train:\n  strategy_args:\n    strategy_name: megatron_train\n"
                                 "    strategy_config:\n      context_parallel_size: 4\n      pipeline_model_parallel_size: 2\n"
                                 "  device_mapping: list(range(0,32))\n"
                                 "actor_infer:\n  strategy_args:\n    strategy_name: vllm\n"
                                 "reference:\n  strategy_args:\n    strategy_name: megatron_infer\n"
                                 "    strategy_config:\n      context_parallel_size: 2\n  device_mapping: [0, 1, 2, 3]\n");
  ASSERT_EQ(roll.variants.size(), 2u);
  EXPECT_EQ(roll.variants[0].role, "ROLL actor_train");
  EXPECT_EQ(roll.variants[0].tree.find("cluster.world_size")->value.integer, 32);
  EXPECT_EQ(roll.variants[0].tree.find("model.seq_length")->value.integer, 6144);
  EXPECT_EQ(roll.variants[0].tree.find("model.context_parallel_size")->value.integer, 4);
  EXPECT_EQ(roll.variants[1].role, "ROLL reference");
  EXPECT_EQ(roll.variants[1].tree.find("cluster.world_size")->value.integer, 4);
  // A worker that sets no CP size gets mcore_adapter's 1 (initialize.py:66), as a default the input does not write.
  const LoadedInput roll_default = input("rlvr2.yaml", "actor_train:\n  strategy_args:\n    strategy_name: megatron_train\n"
                                                       "    strategy_config:\n      tensor_model_parallel_size: 2\n"
                                                       "  device_mapping: list(range(0,8))\n");
  ASSERT_EQ(roll_default.variants.size(), 1u);
  const Setting* roll_cp = roll_default.variants[0].tree.find("model.context_parallel_size");
  ASSERT_NE(roll_cp, nullptr);
  EXPECT_EQ(roll_cp->value.integer, 1);
  EXPECT_TRUE(roll_cp->implied);
  // AReaL's older top-level allocation_mode (areal/trainer/rl_trainer.py): the Megatron component of a
  // disaggregated ('+') allocation, hybrid attn|ffn form included.
  const LoadedInput older = input("swe.yaml", "experiment_name: x\ntrial_name: y\nactor:\n  path: m\n"
                                              "allocation_mode: sglang:d4t4+megatron:(attn:d2p4t2|ffn:d1p4e4)\n");
  ASSERT_EQ(older.variants.size(), 1u);
  EXPECT_EQ(older.variants[0].tree.find("model.tensor_model_parallel_size")->value.integer, 2);
  EXPECT_EQ(older.variants[0].tree.find("model.pipeline_model_parallel_size")->value.integer, 4);
  EXPECT_EQ(older.variants[0].tree.find("cluster.world_size")->value.integer, 16);
  const LoadedInput fsdp_only = input("sft.yaml", "experiment_name: x\ntrial_name: y\nactor:\n  path: m\n"
                                                  "allocation_mode: sglang:d4+fsdp:d4\n");
  EXPECT_TRUE(fsdp_only.variants.empty());
  // AReaL: the allocation string is the mesh; the hybrid form's ffn t is the expert tensor size, 1 by default.
  const LoadedInput flat = input("grpo.yaml", "experiment_name: x\ntrial_name: y\nrollout:\n  backend: \"sglang:d4\"\n"
                                              "actor:\n  backend: \"megatron:d2p2t2c2\"\n");
  ASSERT_EQ(flat.variants.size(), 1u);
  const ConfigTree& f = flat.variants[0].tree;
  EXPECT_EQ(f.find("model.context_parallel_size")->value.integer, 2);
  EXPECT_EQ(f.find("cluster.world_size")->value.integer, 16);
  EXPECT_EQ(f.find("model.expert_tensor_parallel_size")->value.integer, 1);
  const LoadedInput hybrid = input("moe.yaml", "rollout:\n  backend: sglang:d8\n"
                                               "actor:\n  backend: \"megatron:(attn:d1p4t2c2|ffn:d1p4t1e4)\"\n");
  ASSERT_EQ(hybrid.variants.size(), 1u);
  EXPECT_EQ(hybrid.variants[0].tree.find("cluster.world_size")->value.integer, 16);
  EXPECT_EQ(hybrid.variants[0].tree.find("model.expert_model_parallel_size")->value.integer, 4);
  const LoadedInput fsdp = input("fsdp.yaml", "rollout:\n  backend: sglang:d8\nactor:\n  backend: fsdp:d8\n");
  ASSERT_TRUE(fsdp.skipped);
  const LoadedInput bad = input("bad.yaml", "rollout:\n  backend: sglang:d8\nactor:\n  backend: megatron:d2x3\n");
  EXPECT_EQ(bad.unread.size(), 1u);
  // A README quoting a config is a document, not a config.
  const LoadedInput doc = input("megatron.md", "# Megatron\nactor:\n  backend: megatron:d1p4t2c2\n");
  ASSERT_TRUE(doc.skipped);
  EXPECT_NE(doc.skipped->find("Markdown"), std::string::npos);
}

TEST(FrameworkLaunch, MindSpeedAlgorithmsAndMsrun) {
  // hybrid_cp_algo: Ulysses inside groups of --ulysses-degree-in-cp, a ring across (MindSpeed
  // core/context_parallel/model_parallel_utils.py:100-118): a2a+p2p with sizes [U, cp / U].
  const LoadedInput hybrid = input("pretrain_ms.sh",
                                   "msrun --worker_num 16 --local_worker_num 8 --master_port 6000 pretrain_gpt.py "
                                   "--micro-batch-size 1 --context-parallel-size 8 --context-parallel-algo hybrid_cp_algo "
                                   "--ulysses-degree-in-cp 2 --seq-length 65536\n");
  ASSERT_EQ(hybrid.variants.size(), 1u);
  const ConfigTree& t = hybrid.variants[0].tree;
  EXPECT_EQ(t.find("model.cp_comm_type")->value.text, "a2a+p2p");
  EXPECT_EQ(t.find("model.hierarchical_context_parallel_sizes")->value.display(), "[2, 4]");
  EXPECT_EQ(t.find("cluster.world_size")->value.integer, 16);
  EXPECT_EQ(t.find("cluster.gpus_per_node")->value.integer, 8);
  EXPECT_EQ(t.find("mindspeed.context_parallel_algo"), nullptr);
  EXPECT_EQ(t.find("framework.attention")->value.text, "MindSpeed");
  const auto comm = [](const char* algo) {
    const LoadedInput in = input("x.sh", std::string("torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 1 "
                                                     "--context-parallel-size 4 --context-parallel-algo ") + algo + "\n");
    const Setting* s = in.variants.at(0).tree.find("model.cp_comm_type");
    return s->provenance == Provenance::unknown ? std::string("unknown") : s->value.text;
  };
  EXPECT_EQ(comm("ulysses_cp_algo"), "a2a");
  EXPECT_EQ(comm("megatron_cp_algo"), "p2p");
  EXPECT_EQ(comm("kvallgather_cp_algo"), "all_gather");
  EXPECT_EQ(comm("adaptive_cp_algo"), "unknown");
}

TEST(ScriptLoader, SlimeActorShapeAlsoInAnArgumentFile) {
  // An argument file's training words start at word 0 (no program before them): the defaults' place is that word
  // (the fuzzer found the word before it read out of bounds).
  const LoadedInput in = input("train.args", "--micro-batch-size 1 --context-parallel-size 2 --actor-num-nodes 2\n");
  ASSERT_EQ(in.variants.size(), 1u);
  EXPECT_EQ(in.variants[0].tree.find("cluster.nodes")->value.integer, 2);
  EXPECT_EQ(in.variants[0].tree.find("cluster.gpus_per_node")->value.integer, 8);  // slime's default
  EXPECT_TRUE(in.variants[0].tree.find("cluster.gpus_per_node")->implied);
}

TEST(ScriptLoader, SourcedFilesOutsideTheScriptsFolderAreNeverRead) {
  namespace fs = std::filesystem;
  const fs::path top = fs::temp_directory_path() / ("hcp-sandbox-" + std::to_string(::getpid()));
  fs::remove_all(top);
  fs::create_directories(top / "job" / "sub");
  auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  write(top / "secret.env", "CP=4\n");
  write(top / "job" / "inside.env", "SEQ=8192\n");
  write(top / "job" / "sub" / "deeper.env", "HEADS=16\n");
  fs::create_symlink(top / "secret.env", top / "job" / "link.env");
  const std::string launch = "torchrun --nproc_per_node 8 pretrain_gpt.py --context-parallel-size ${CP:-1} "
                             "--seq-length $SEQ --num-attention-heads $HEADS --micro-batch-size 1\n";
  for (const std::string& line : std::vector<std::string>{"source ../secret.env\n", "source " + (top / "secret.env").string() + "\n",
                                  ". ./link.env\n", "source \"$(dirname \"$0\")/link.env\"\n"}) {
    const fs::path script = top / "job" / "train.sh";
    const std::string text = line + "source inside.env\nsource sub/deeper.env\n" + launch;
    write(script, text);
    const LoadedInput in = load_input(SourceText{script.string(), text, InputFormat::automatic});
    ASSERT_EQ(in.variants.size(), 1u) << line;
    const ConfigTree& t = in.variants[0].tree;
    EXPECT_EQ(t.find("model.context_parallel_size")->value.integer, 1) << line;  // the default: never read
    EXPECT_EQ(t.find("model.seq_length")->value.integer, 8192) << line;          // next to the script: read
    EXPECT_EQ(t.find("model.num_attention_heads")->value.integer, 16) << line;   // below it: read
    ASSERT_EQ(in.sourced.size(), 2u) << line;
    bool said = false;
    for (const auto& [where, why] : in.unread) said |= why.find("outside the script's folder") != std::string::npos;
    EXPECT_TRUE(said) << line;
  }
  // A script read from standard input sources nothing.
  const LoadedInput in = load_input(SourceText{"<stdin>", "source /etc/passwd\n" + launch, InputFormat::megatron});
  EXPECT_TRUE(in.sourced.empty());
  fs::remove_all(top);
}

// A file that sources a file being read already, under any spelling (./a.sh, sub/../a.sh): followed once, then
// named as a cycle - the spellings were compared as text, so the loop went five levels deep and every finding of
// the script was reported five times over (issue 54).
TEST(ScriptLoader, ASourceCycleIsFoundWhateverThePathsSpelling) {
  namespace fs = std::filesystem;
  const fs::path top = fs::temp_directory_path() / ("hcp-cycle-" + std::to_string(::getpid()));
  fs::remove_all(top);
  fs::create_directories(top / "sub");
  auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  write(top / "sub" / "env.sh", "source ../train.sh\nexport SEQ=8192\n");
  const std::string text = "source ./sub/env.sh\nsource ./train.sh\n"
                           "torchrun --nproc_per_node 8 pretrain_gpt.py --context-parallel-size 2 --seq-length $SEQ\n";
  write(top / "train.sh", text);
  const LoadedInput in = load_input(SourceText{(top / "train.sh").string(), text, InputFormat::automatic});
  ASSERT_EQ(in.variants.size(), 1u);
  EXPECT_EQ(in.variants[0].tree.find("model.seq_length")->value.integer, 8192);
  ASSERT_EQ(in.sourced.size(), 1u);  // env.sh once; train.sh never again
  int cycles = 0;
  for (const auto& [where, why] : in.unread)
    cycles += why.find(": a cycle, " + (top / "train.sh").string() + " is being read already") != std::string::npos;
  EXPECT_EQ(cycles, 2);  // ../train.sh from env.sh, ./train.sh from train.sh
  fs::remove_all(top);
}

}  // namespace
}  // namespace hcp::lint


namespace hcp::lint {
namespace {

// Primus launches (primus_launch.cpp): the experiment from EXP or --config, found from the script's folder upwards
// inside the working directory, the `--key value` overrides on top, the world NNODES x GPUS_PER_NODE with
// run_pretrain.sh's defaults (1 x 8) and unknown under Slurm; an experiment outside the working directory is not read.
TEST(FrameworkLaunch, PrimusExperimentOverridesAndWorld) {
  namespace fs = std::filesystem;
  const fs::path before = fs::current_path();
  const fs::path top = fs::temp_directory_path() / ("hcp-primus-" + std::to_string(::getpid()));
  fs::remove_all(top);
  fs::create_directories(top / "repo" / "examples" / "configs");
  fs::create_directories(top / "repo" / "examples" / "mine");
  auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  write(top / "outside.yaml", "modules:\n  pre_trainer:\n    framework: megatron\n    overrides:\n"
                              "      context_parallel_size: 64\n");
  // The module preset sits at the checkout's root, where hcp-lint runs from: found there too.
  fs::create_directories(top / "repo" / "primus" / "configs" / "modules" / "megatron");
  write(top / "repo" / "primus" / "configs" / "modules" / "megatron" / "pre_trainer.yaml", "num_attention_heads: 32\n");
  write(top / "repo" / "examples" / "configs" / "exp.yaml",
        "modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n    overrides:\n"
        "      context_parallel_size: 2\n      tensor_model_parallel_size: 2\n      seq_length: 8192\n");
  write(top / "repo" / "examples" / "mine" / "local.sh",
        "export EXP=examples/configs/exp.yaml\nbash ./examples/run_pretrain.sh --context_parallel_size 4 "
        "--cp_comm_type=a2a --train_iters 10\n");
  write(top / "repo" / "examples" / "mine" / "slurm.sh",
        "NNODES=4 ./primus-cli slurm -N 4 -- train pretrain --config examples/configs/exp.yaml seq_length=4096\n");
  write(top / "repo" / "examples" / "mine" / "escape.sh",
        "./primus-cli direct -- train pretrain --config " + (top / "outside.yaml").string() + "\n");
  fs::current_path(top / "repo");
  const auto load = [](const std::string& path) { return load_input(read_source(path)); };
  const LoadedInput local = load("examples/mine/local.sh");
  const LoadedInput slurm = load("examples/mine/slurm.sh");
  const LoadedInput escape = load("examples/mine/escape.sh");
  fs::current_path(before);
  fs::remove_all(top);

  ASSERT_EQ(local.variants.size(), 1u);
  const ConfigTree& l = local.variants[0].tree;
  EXPECT_EQ(l.find("model.context_parallel_size")->value.integer, 4);  // the override wins over the experiment
  EXPECT_EQ(l.find("model.tensor_model_parallel_size")->value.integer, 2);
  EXPECT_EQ(l.find("model.cp_comm_type")->value.text, "a2a");
  EXPECT_EQ(l.find("model.num_attention_heads")->value.integer, 32);
  EXPECT_EQ(l.find("cluster.nodes")->value.integer, 1);
  EXPECT_EQ(l.find("cluster.gpus_per_node")->value.integer, 8);
  EXPECT_TRUE(l.find("cluster.gpus_per_node")->implied);

  ASSERT_EQ(slurm.variants.size(), 1u);
  const ConfigTree& s = slurm.variants[0].tree;
  EXPECT_EQ(s.find("model.seq_length")->value.integer, 4096);
  EXPECT_EQ(s.find("model.context_parallel_size")->value.integer, 2);
  EXPECT_EQ(s.find("cluster.gpus_per_node"), nullptr);  // Slurm's allocation: unknown

  ASSERT_EQ(escape.variants.size(), 1u);
  EXPECT_EQ(escape.variants[0].tree.find("model.context_parallel_size"), nullptr);
  ASSERT_FALSE(escape.unread.empty());
  EXPECT_NE(escape.unread[0].second.find("is not read"), std::string::npos);
}

// AReaL launches whose --config file holds the Megatron allocation (areal/api/cli_args.py: the file, then the
// key=value overrides): the file's actor.backend, an override's over it; a file of another backend is not claimed.
TEST(FrameworkLaunch, ArealConfigFileBackend) {
  namespace fs = std::filesystem;
  const fs::path before = fs::current_path();
  const fs::path top = fs::temp_directory_path() / ("hcp-areal-" + std::to_string(::getpid()));
  fs::remove_all(top);
  fs::create_directories(top / "examples");
  auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  write(top / "examples" / "megatron.yaml", "actor:\n  backend: \"megatron:d2p1t2c2\"\nscheduler:\n  type: local\n");
  write(top / "examples" / "fsdp.yaml", "actor:\n  backend: \"fsdp:d8\"\n");
  write(top / "file.sh", "python3 examples/gsm8k_rl.py --config examples/megatron.yaml scheduler.type=local\n");
  write(top / "override.sh",
        "python3 examples/gsm8k_rl.py --config examples/megatron.yaml actor.backend=megatron:d1p1t2c4\n");
  write(top / "fsdp.sh", "python3 examples/gsm8k_rl.py --config examples/fsdp.yaml scheduler.type=local\n");
  fs::current_path(top);
  const auto load = [](const std::string& path) { return load_input(read_source(path)); };
  const LoadedInput file = load("file.sh");
  const LoadedInput override = load("override.sh");
  const LoadedInput fsdp = load("fsdp.sh");
  fs::current_path(before);
  fs::remove_all(top);

  ASSERT_EQ(file.variants.size(), 1u);
  EXPECT_EQ(file.variants[0].role, "AReaL actor");
  EXPECT_EQ(file.variants[0].tree.find("model.context_parallel_size")->value.integer, 2);
  EXPECT_EQ(file.variants[0].tree.find("cluster.world_size")->value.integer, 8);
  EXPECT_EQ(file.variants[0].tree.find("scheduler.type"), nullptr);  // AReaL's scheduler, not Bridge's
  ASSERT_EQ(override.variants.size(), 1u);
  EXPECT_EQ(override.variants[0].tree.find("model.context_parallel_size")->value.integer, 4);
  // Another backend: AReaL's launch, skipped with why - its scheduler.type is not Megatron-Bridge's scheduler.
  EXPECT_TRUE(fsdp.variants.empty());
  ASSERT_TRUE(fsdp.skipped);
  EXPECT_NE(fsdp.skipped->find("AReaL"), std::string::npos) << *fsdp.skipped;
}

}  // namespace
}  // namespace hcp::lint

namespace hcp::lint {
namespace {

// FlagScale's train group named with its extension (`train: train_deepseek_v3.yaml`): Hydra adds .yaml only when
// the name lacks it, so that file is the group.
TEST(FrameworkLaunch, FlagScaleGroupNamedWithItsExtension) {
  namespace fs = std::filesystem;
  const fs::path before = fs::current_path();
  const fs::path top = fs::temp_directory_path() / ("hcp-flagscale-" + std::to_string(::getpid()));
  fs::remove_all(top);
  fs::create_directories(top / "conf" / "train");
  auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  write(top / "conf" / "train" / "train_v3.yaml", "system:\n  context_parallel_size: 2\n  tensor_model_parallel_size: 2\n");
  write(top / "conf" / "config.yaml",
        "defaults:\n  - train: train_v3.yaml\n  - _self_\nexperiment:\n  task:\n    type: train\n    backend: megatron\n"
        "  runner:\n    backend: torchrun\n    nnodes: 1\n    nproc_per_node: 8\naction: run\n");
  fs::current_path(top);
  const LoadedInput in = load_input(read_source("conf/config.yaml"));
  fs::current_path(before);
  fs::remove_all(top);
  ASSERT_EQ(in.variants.size(), 1u);
  const Setting* cp = in.variants[0].tree.find("model.context_parallel_size");
  ASSERT_NE(cp, nullptr);
  EXPECT_EQ(cp->value.integer, 2);
}

}  // namespace
}  // namespace hcp::lint
