// The Python loader: Megatron-Bridge and NeMo 2 configs read without running them, each value with where it came
// from; units per function; files that build no config skipped; bad input never a crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hcp/lint/linter.hpp"
#include "hcp/lint/loaders.hpp"

namespace hcp::lint {
namespace {

using ::testing::HasSubstr;

LoadedInput load(const std::string& text, const std::string& name = "cfg.py") {
  return load_input(SourceText{name, text, InputFormat::automatic});
}

std::vector<Diagnostic> findings(const std::string& text, Severity at_least = Severity::warning) {
  LintOptions o;
  const LintReport r = lint({SourceText{"cfg.py", text, InputFormat::automatic}}, o);
  std::vector<Diagnostic> out;
  for (const Diagnostic& d : r.units.at(0).diagnostics) {
    if (d.severity >= at_least) out.push_back(d);
  }
  return out;
}

std::vector<std::string> codes(const std::vector<Diagnostic>& ds) {
  std::vector<std::string> out;
  for (const Diagnostic& d : ds) out.push_back(d.code + " " + std::string(severity_name(d.severity)));
  return out;
}

const char* const kGuide =
    "cfg.model.context_parallel_size = 4\n"
    "cfg.model.cp_comm_type = \"a2a+p2p\"\n"
    "cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n"
    "cfg.dist.use_decentralized_pg = False\n";

TEST(PythonLoader, TheGuideLinesLintCleanAndWithoutSizesGiveHcp001) {
  EXPECT_TRUE(findings(kGuide).empty());
  const std::string without = "cfg.model.context_parallel_size = 4\ncfg.model.cp_comm_type = \"a2a+p2p\"\n"
                              "cfg.dist.use_decentralized_pg = False\n";
  const std::vector<Diagnostic> ds = findings(without);
  ASSERT_EQ(codes(ds), std::vector<std::string>{"HCP001 error"});
  EXPECT_EQ(ds[0].loc.line, 2);
  EXPECT_EQ(ds[0].loc.col, 11);  // at cp_comm_type
}

TEST(PythonLoader, ValuesPositionsAndProvenance) {
  const LoadedInput in = load(
      "from megatron.bridge.training.config import ConfigContainer\n"
      "SEQ = 4096\n"
      "def recipe(context_parallel_size: int = 2, tp=None, *, settings):\n"
      "    cfg = llama3_8b_pretrain_config()\n"
      "    cfg.model.context_parallel_size = context_parallel_size\n"
      "    cfg.model.seq_length = SEQ * 2\n"
      "    cfg.dataset.seq_length = cfg.model.seq_length\n"
      "    cfg.model.tensor_model_parallel_size = settings.tp\n"
      "    cfg.model.pipeline_model_parallel_size = int(os.getenv('PP', '1'))\n"
      "    return cfg\n");
  ASSERT_FALSE(in.skipped) << *in.skipped;
  ASSERT_EQ(in.variants.size(), 1u);
  const ConfigTree& t = in.variants[0].tree;
  const Setting* cp = t.find("model.context_parallel_size");
  ASSERT_NE(cp, nullptr);
  EXPECT_EQ(cp->provenance, Provenance::defaulted);
  EXPECT_EQ(cp->value.integer, 2);
  EXPECT_EQ(cp->why, "the default value of `context_parallel_size` in `recipe()`");
  EXPECT_EQ(cp->key_loc.text(), "cfg.py:5:15");
  EXPECT_EQ(t.find("model.seq_length")->value.integer, 8192);
  EXPECT_EQ(t.find("model.seq_length")->provenance, Provenance::computed);
  EXPECT_EQ(t.find("dataset.seq_length")->value.integer, 8192);
  EXPECT_EQ(t.find("model.tensor_model_parallel_size")->provenance, Provenance::unknown);
  EXPECT_THAT(t.find("model.tensor_model_parallel_size")->why, HasSubstr("settings.tp"));
  EXPECT_EQ(t.find("model.pipeline_model_parallel_size")->provenance, Provenance::unknown);
  EXPECT_THAT(t.find("model.pipeline_model_parallel_size")->why, HasSubstr("environment variable"));
}

TEST(PythonLoader, AFindingOnADefaultIsAWarningThatSaysWhose) {
  const std::vector<Diagnostic> ds = findings(
      "from megatron.bridge.recipes.utils import x\n"
      "def recipe(context_parallel_size: int = 3, seq_length: int = 4096):\n"
      "    cfg = _pretrain_common()\n"
      "    cfg.model.context_parallel_size = context_parallel_size\n"
      "    cfg.model.seq_length = seq_length\n"
      "    return cfg\n");
  ASSERT_EQ(codes(ds), std::vector<std::string>{"HCP003 warning"});
  EXPECT_THAT(ds[0].message, HasSubstr("the default value of `context_parallel_size` in `recipe()`"));
}

TEST(PythonLoader, AFunctionTheFileCallsIsReadWhereItIsCalled) {
  const std::string def =
      "import megatron.bridge\n"
      "def recipe(context_parallel_size: int = 3, seq_length: int = 4096):\n"
      "    cfg = _pretrain_common()\n"
      "    cfg.model.context_parallel_size = context_parallel_size\n"
      "    cfg.model.seq_length = seq_length\n"
      "    return cfg\n";
  // Alone, the defaults are defaults: a warning that says whose.
  std::vector<Diagnostic> ds = findings(def);
  ASSERT_EQ(codes(ds), std::vector<std::string>{"HCP003 warning"});
  // Called with its defaults, they are the values that run: the finding keeps its severity.
  ds = findings(def + "if __name__ == '__main__':\n    cfg = recipe()\n    cfg.train.train_iters = 10\n");
  ASSERT_EQ(codes(ds), std::vector<std::string>{"HCP003 error"});
  EXPECT_EQ(ds[0].loc.line, 5);  // at the seq_length the call leaves to its default
  // Called with other values, the call's values count.
  EXPECT_TRUE(findings(def + "cfg = recipe(context_parallel_size=2)\n").empty());
  EXPECT_EQ(codes(findings(def + "cfg = recipe(3, 4096)\n")), std::vector<std::string>{"HCP003 error"});
  // A call that may pass anything (**kwargs of unknown content) knows nothing of the parameters it does not name.
  EXPECT_TRUE(findings(def + "def main(**kw):\n    return recipe(**kw)\n").empty());
  // A call from another function passes that function's values, defaults staying defaults.
  ds = findings(def + "def outer(cp: int = 3):\n    return recipe(context_parallel_size=cp)\n");
  ASSERT_EQ(codes(ds), std::vector<std::string>{"HCP003 warning"});
  EXPECT_THAT(ds[0].message, HasSubstr("the default value of `cp` in `outer()`"));
  // A helper that changes the config it is given changes the caller's.
  EXPECT_EQ(codes(findings("import megatron.bridge\n"
                           "def enable_hcp(cfg):\n"
                           "    cfg.model.cp_comm_type = 'a2a+p2p'\n"
                           "def build():\n"
                           "    cfg = _pretrain_common()\n"
                           "    cfg.model.context_parallel_size = 4\n"
                           "    enable_hcp(cfg)\n"
                           "    return cfg\n")),
            std::vector<std::string>{"HCP001 error"});
  // Recursion is not followed forever.
  EXPECT_NO_THROW(findings("import megatron.bridge\ndef f(n):\n    cfg = f(n - 1)\n    cfg.model.seq_length = 8\n"
                           "    return cfg\nf(3)\n"));
}

TEST(PythonLoader, Nemo2RecipesComposedOfTheFilesFunctions) {
  // NeMo 2 recipes build the trainer, the model and the data in functions of their own and combine them.
  const std::string recipe =
      "import nemo_run as run\n"
      "from nemo.collections import llm\n"
      "def trainer(num_nodes: int = 1, context_parallelism: int = 3):\n"
      "    strategy = run.Config(nl.MegatronStrategy, context_parallel_size=context_parallelism)\n"
      "    return run.Config(nl.Trainer, num_nodes=num_nodes, devices=8, strategy=strategy)\n"
      "def model():\n"
      "    conf = run.Config(llm.Llama31Config70B)\n"
      "    conf.seq_length = 8192\n"
      "    return run.Config(llm.LlamaModel, config=conf)\n"
      "def pretrain_recipe(num_nodes: int = 1):\n"
      "    return run.Partial(llm.pretrain, model=model(), trainer=trainer(num_nodes=num_nodes),\n"
      "                       data=run.Config(MockDataModule, seq_length=8192))\n";
  const LoadedInput in = load(recipe);
  ASSERT_EQ(in.variants.size(), 1u);  // trainer() and model() are read where pretrain_recipe() calls them
  const ConfigTree& t = in.variants[0].tree;
  EXPECT_EQ(t.find("model.context_parallel_size")->value.integer, 3);
  EXPECT_EQ(t.find("model.context_parallel_size")->provenance, Provenance::literal);  // the default that runs
  EXPECT_EQ(t.find("model.seq_length")->value.integer, 8192);
  EXPECT_EQ(t.find("dataset.seq_length")->value.integer, 8192);
  EXPECT_EQ(t.find("cluster.nodes")->provenance, Provenance::defaulted);
  // 1 node of 8 GPUs is not divisible by cp 3 (a warning: the node count is pretrain_recipe()'s default); 8192,
  // the model's and the data's sequence length, is not divisible by 2 * 3.
  EXPECT_EQ(codes(findings(recipe)), (std::vector<std::string>{"HCP010 warning", "HCP003 error", "HCP003 error"}));
  // The factory's own keywords: tensor_parallelism, pipeline_parallelism, context_parallelism, num_nodes, ...
  const LoadedInput call = load("from nemo.collections import llm\n"
                                "recipe = llm.qwen25_72b.pretrain_recipe(num_nodes=1, num_gpus_per_node=8,\n"
                                "    tensor_parallelism=4, pipeline_parallelism=4, context_parallelism=2)\n");
  const ConfigTree& c = call.variants.at(0).tree;
  // So do Bridge's recipes of 2025 and early 2026.
  const LoadedInput bridge = load("from megatron.bridge.recipes.llama import llama3_8b_pretrain_config\n"
                                  "cfg = llama3_8b_pretrain_config(context_parallelism=3, seq_length=8192)\n");
  EXPECT_EQ(bridge.variants.at(0).tree.find("model.context_parallel_size")->value.integer, 3);
  EXPECT_EQ(bridge.variants.at(0).tree.find("dataset.seq_length")->value.integer, 8192);
  EXPECT_EQ(codes(findings("from megatron.bridge.recipes.llama import llama3_8b_pretrain_config\n"
                           "cfg = llama3_8b_pretrain_config(context_parallel_size=3, seq_length=8192)\n")),
            (std::vector<std::string>{"HCP003 error", "HCP003 error"}));
  EXPECT_EQ(c.find("model.tensor_model_parallel_size")->value.integer, 4);
  EXPECT_EQ(c.find("model.pipeline_model_parallel_size")->value.integer, 4);
  EXPECT_EQ(c.find("model.context_parallel_size")->value.integer, 2);
  EXPECT_EQ(c.find("cluster.gpus_per_node")->value.integer, 8);
}

TEST(PythonLoader, ProvidersFromAutoBridgeMethodsAndOtherStrategies) {
  // A provider from to_megatron_provider() kept in a variable is the model section.
  EXPECT_EQ(codes(findings("from megatron.bridge import AutoBridge\n"
                           "provider = AutoBridge.from_hf_pretrained('x').to_megatron_provider(load_weights=False)\n"
                           "provider.context_parallel_size = 4\n"
                           "provider.cp_comm_type = 'a2a+p2p'\n"
                           "cfg = ConfigContainer(model=provider)\n")),
            std::vector<std::string>{"HCP001 error"});
  // Methods of a class are units too.
  EXPECT_EQ(codes(findings("from megatron.bridge.models import GPTModelProvider\n"
                           "class TestPretrain:\n"
                           "    def test_hcp(self):\n"
                           "        m = GPTModelProvider(context_parallel_size=2, cp_comm_type='a2a+p2p')\n"
                           "        ConfigContainer(model=m)\n")),
            std::vector<std::string>{"HCP001 error"});
  // FSDP2's context parallelism is not Megatron's: nothing of it counts.
  const LoadedInput in = load("import nemo_run as run\n"
                              "def t():\n"
                              "    return run.Config(nl.Trainer, devices=8,\n"
                              "        strategy=run.Config(nl.FSDP2Strategy, context_parallel_size=3))\n");
  EXPECT_EQ(in.variants.at(0).tree.find("model.context_parallel_size"), nullptr);
  // An import inside a function still makes the file a config library's.
  const LoadedInput late = load("def f():\n    from megatron.bridge.models import x\n    return 1\n");
  ASSERT_TRUE(late.skipped);
  EXPECT_THAT(*late.skipped, HasSubstr("builds no Megatron-Bridge ConfigContainer"));
}

TEST(PythonLoader, LightningDevicesAutoIsUnknownNotATypeError) {
  EXPECT_TRUE(findings("import nemo_run as run\n"
                       "def f():\n"
                       "    return run.Config(nl.Trainer, devices='auto', num_nodes=2,\n"
                       "        strategy=run.Config(nl.MegatronStrategy, tensor_model_parallel_size=8))\n")
                  .empty());
}

TEST(PythonLoader, UnknownValuesAreNeverErrors) {
  EXPECT_TRUE(findings("import megatron.bridge\n"
                       "def main(args):\n"
                       "    cfg = get_config(args)\n"
                       "    cfg.model.context_parallel_size = args.cp\n"
                       "    cfg.model.cp_comm_type = args.comm\n"
                       "    cfg.model.seq_length = args.seq\n")
                  .empty());
}

TEST(PythonLoader, ConstructorsKeywordsDictsAndSplats) {
  const LoadedInput in = load(
      "from megatron.bridge.training.config import ConfigContainer, GPTDatasetConfig, DistributedInitConfig\n"
      "common = {'context_parallel_size': 4, 'cp_comm_type': 'a2a+p2p'}\n"
      "def build():\n"
      "    model = GPTModelProvider(**common, hierarchical_context_parallel_sizes=[2, 2])\n"
      "    return ConfigContainer(model=model, dataset=GPTDatasetConfig(seq_length=8192),\n"
      "                           dist=DistributedInitConfig(use_decentralized_pg=True))\n"
      "def open_kwargs(**kw):\n"
      "    return ConfigContainer(model=GPTModelProvider(cp_comm_type='a2a+p2p', **kw))\n");
  ASSERT_EQ(in.variants.size(), 2u);  // two units
  const ConfigTree& t = in.variants[0].tree;
  EXPECT_EQ(t.find("model.context_parallel_size")->value.integer, 4);
  EXPECT_EQ(t.find("model.hierarchical_context_parallel_sizes")->value.display(), "[2, 2]");
  EXPECT_EQ(t.find("dataset.seq_length")->value.integer, 8192);
  EXPECT_TRUE(t.find("dist.use_decentralized_pg")->value.boolean);
  // **kw may carry the sizes: unknown, not absent (no HCP001 on the second unit).
  const ConfigTree& u = in.variants[1].tree;
  EXPECT_EQ(u.find("model.hierarchical_context_parallel_sizes")->provenance, Provenance::unknown);
  EXPECT_EQ(in.variants[1].unit, 1);
  const std::vector<Diagnostic> ds = findings(
      "from megatron.bridge.training.config import ConfigContainer, GPTDatasetConfig, DistributedInitConfig\n"
      "def build():\n"
      "    model = GPTModelProvider(context_parallel_size=4, cp_comm_type='a2a+p2p',\n"
      "                             hierarchical_context_parallel_sizes=[2, 2])\n"
      "    return ConfigContainer(model=model, dist=DistributedInitConfig(use_decentralized_pg=True))\n"
      "def open_kwargs(**kw):\n"
      "    return ConfigContainer(model=GPTModelProvider(cp_comm_type='a2a+p2p', **kw))\n");
  EXPECT_EQ(codes(ds), std::vector<std::string>{"HCP006 error"});
}

TEST(PythonLoader, UnknownBranchesForkAndKnownOnesAreTaken) {
  const char* text =
      "import megatron.bridge\n"
      "FAST = True\n"
      "def recipe(cfg: ConfigContainer, long_context):\n"
      "    cfg.model.context_parallel_size = 4\n"
      "    if FAST:\n"
      "        cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n"
      "    if long_context:\n"
      "        cfg.model.cp_comm_type = 'a2a+p2p'\n"
      "    else:\n"
      "        cfg.model.cp_comm_type = 'a2a+pp'\n";
  const LoadedInput in = load(text);
  ASSERT_EQ(in.variants.size(), 2u);
  EXPECT_EQ(in.variants[0].conditions, std::vector<std::string>{"long_context"});
  EXPECT_EQ(in.variants[1].conditions, std::vector<std::string>{"not (long_context)"});
  const std::vector<Diagnostic> ds = findings(text);
  // Both hold on the else path only: the misspelt type, and with it sizes that no layer uses.
  ASSERT_EQ(codes(ds), (std::vector<std::string>{"HCP015 warning", "HCP012 warning"}));
  EXPECT_THAT(ds[1].message, HasSubstr("when not (long_context): "));
}

TEST(PythonLoader, AllgatherIsRightForDeepSeekSparseAttentionOnly) {
  // Megatron-Core's DSA requires cp_comm_type "allgather" (transformer_config.py); TE refuses it elsewhere.
  const std::string base = "cfg.model.context_parallel_size = 32\ncfg.model.cp_comm_type = \"allgather\"\n";
  EXPECT_EQ(codes(findings(base)), std::vector<std::string>{"HCP012 error"});
  EXPECT_TRUE(findings(base + "cfg.model.dsa_kernel_backend = \"cudnn\"\n").empty());
  EXPECT_TRUE(findings(base + "cfg.model.experimental_attention_variant = \"dsa\"\n").empty());
}

TEST(PythonLoader, LoopsAndReplacedSectionsMakeValuesUnknown) {
  const LoadedInput in = load(
      "import megatron.bridge\n"
      "def recipe():\n"
      "    cfg = _pretrain_common()\n"
      "    cfg.model.cp_comm_type = 'a2a+p2p'\n"
      "    cfg.model.seq_length = 4096\n"
      "    cfg.model = AutoBridge.from_hf_pretrained('x').to_megatron_provider()\n"
      "    cfg.dataset.seq_length = 1024\n"
      "    for n in range(3):\n"
      "        cfg.dataset.seq_length = cfg.dataset.seq_length * 2\n"
      "    return cfg\n");
  const ConfigTree& t = in.variants.at(0).tree;
  EXPECT_EQ(t.find("model.cp_comm_type"), nullptr);  // the section was replaced by a provider the file cannot see
  EXPECT_EQ(t.find("model.seq_length"), nullptr);
  EXPECT_EQ(t.find("dataset.seq_length")->provenance, Provenance::unknown);
}

TEST(PythonLoader, Nemo2RecipesMapToTheSameKeys) {
  const LoadedInput in = load(
      "import nemo_run as run\n"
      "from nemo.collections import llm\n"
      "def configure():\n"
      "    recipe = llm.llama3_8b.pretrain_recipe(num_nodes=2, num_gpus_per_node=8)\n"
      "    recipe.trainer.strategy.context_parallel_size = 4\n"
      "    recipe.trainer.strategy.tensor_model_parallel_size = 2\n"
      "    recipe.model.config.cp_comm_type = 'a2a'\n"
      "    recipe.data.seq_length = 16384\n"
      "    return recipe\n"
      "def trainer():\n"
      "    return run.Config(nl.Trainer, devices=8, strategy=run.Config(nl.MegatronStrategy, context_parallel_size=2))\n");
  ASSERT_EQ(in.variants.size(), 2u);
  const ConfigTree& t = in.variants[0].tree;
  EXPECT_EQ(t.find("cluster.nodes")->value.integer, 2);
  EXPECT_EQ(t.find("cluster.gpus_per_node")->value.integer, 8);
  EXPECT_EQ(t.find("model.context_parallel_size")->value.integer, 4);
  EXPECT_EQ(t.find("model.tensor_model_parallel_size")->value.integer, 2);
  EXPECT_EQ(t.find("model.cp_comm_type")->value.text, "a2a");
  EXPECT_EQ(t.find("dataset.seq_length")->value.integer, 16384);
  const ConfigTree& u = in.variants[1].tree;
  EXPECT_EQ(u.find("model.context_parallel_size")->value.integer, 2);
  EXPECT_EQ(u.find("cluster.gpus_per_node")->value.integer, 8);
}

TEST(PythonLoader, FilesThatBuildNoConfigAreSkippedWithTheReason) {
  const LoadedInput util = load("import os\n\ndef helper(x):\n    return x.model.training\n", "utils.py");
  ASSERT_TRUE(util.skipped);
  EXPECT_THAT(*util.skipped, HasSubstr("imports neither Megatron-Bridge nor NeMo"));
  const LoadedInput model = load("from megatron.bridge.models import GPTModelProvider\n"
                                 "class MyProvider(GPTModelProvider):\n    context_parallel_size: int = 2\n");
  ASSERT_TRUE(model.skipped);
  EXPECT_THAT(*model.skipped, HasSubstr("builds no Megatron-Bridge ConfigContainer"));
  // Not taken for TOML or YAML either: a file that starts with an import is Python even without the extension.
  EXPECT_EQ(detect_format("train_config", "import torch\nx = 1\n"), InputFormat::python);
  EXPECT_EQ(detect_format("run", "#!/usr/bin/env python3\nx = 1\n"), InputFormat::python);
}

TEST(PythonLoader, BadInputIsReadAsFarAsPossibleAndNeverCrashes) {
  const LoadedInput broken = load("import megatron.bridge\ncfg.model.context_parallel_size = (\n"
                                  "cfg.model.cp_comm_type = 'a2a+p2p'\n");
  ASSERT_FALSE(broken.unread.empty());
  EXPECT_EQ(broken.unread[0].second, "a syntax error");
  // Deep nesting of expressions and blocks is bounded, not a stack overflow.
  std::string deep = "import megatron.bridge\ncfg.model.context_parallel_size = " + std::string(5000, '(') + "1" +
                     std::string(5000, ')') + "\n";
  EXPECT_NO_THROW(load(deep));
  std::string blocks = "import megatron.bridge\n";
  for (int i = 0; i < 200; ++i) blocks += std::string(static_cast<size_t>(i), ' ') + "if x:\n";
  blocks += std::string(200, ' ') + "cfg.model.context_parallel_size = 2\n";
  EXPECT_NO_THROW(load(blocks));
  // A long elif chain of unknown tests: past 32 paths the rest is joined, without a recursion per clause.
  std::string chain = "import megatron.bridge\nif a0:\n    cfg.model.context_parallel_size = 0\n";
  for (int i = 1; i < 5000; ++i) {
    chain += "elif a" + std::to_string(i) + ":\n    cfg.model.context_parallel_size = " + std::to_string(i) + "\n";
  }
  const LoadedInput joined = load(chain);
  ASSERT_EQ(joined.variants.size(), 32u);  // 31 forks, then one path for all the rest
  EXPECT_EQ(joined.variants.back().tree.find("model.context_parallel_size")->provenance, Provenance::unknown);
  // Overflowing arithmetic is unknown, not wrapped.
  const LoadedInput big = load("import megatron.bridge\ncfg.model.seq_length = 2 ** 70\n"
                               "cfg.model.context_parallel_size = 9223372036854775807 + 1\n");
  EXPECT_EQ(big.variants.at(0).tree.find("model.seq_length")->provenance, Provenance::unknown);
  EXPECT_EQ(big.variants.at(0).tree.find("model.context_parallel_size")->provenance, Provenance::unknown);
}

}  // namespace
}  // namespace hcp::lint
