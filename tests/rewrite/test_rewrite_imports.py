"""adopter/rewrite/imports.py: a rewrite's imports go where isort (and ruff's I001) would put them."""

import libcst as cst
import pytest

from adopter.rewrite.imports import add_imports

KERNELS = [("adopter_kernels", "gated_silu", None)]


@pytest.mark.parametrize("source, expected", [
    # between the third-party imports, `import` lines first, then by module: not after first-party ones
    ("import math\n\nimport torch\nimport torch.nn.functional as F\nfrom typing_extensions import Self\n\n"
     "from litgpt.config import Config\n\nx = 1\n",
     "import math\n\nimport torch\nimport torch.nn.functional as F\nfrom adopter_kernels import gated_silu  # adopter-kernels>=0.1.0\n"
     "from typing_extensions import Self\n\nfrom litgpt.config import Config\n\nx = 1\n"),
    # the first of its section takes the blank line above the section
    ("import math\n\nfrom torch import nn\n\nfrom litgpt.config import Config\n",
     "import math\n\nfrom adopter_kernels import gated_silu  # adopter-kernels>=0.1.0\nfrom torch import nn\n\nfrom litgpt.config import Config\n"),
    # no third-party section: a section of its own, set apart from its neighbours
    ("import math\n\nfrom litgpt.config import Config\n",
     "import math\n\nfrom adopter_kernels import gated_silu  # adopter-kernels>=0.1.0\n\nfrom litgpt.config import Config\n"),
    # only first-party imports, under a comment: the comment stays at the top
    ('"""Doc."""\n# the model\nfrom litgpt.config import Config\nfrom . import utils\n',
     '"""Doc."""\n# the model\nfrom adopter_kernels import gated_silu  # adopter-kernels>=0.1.0\n\nfrom litgpt.config import Config\nfrom . import utils\n'),
    # a module the file imports from already: the name joins that import where it stands (which
    # names the requirement then, as one the rewriter adds does)
    ("import torch\nfrom adopter_kernels import softmax_last_dim\nfrom torch import nn\n",
     "import torch\nfrom adopter_kernels import gated_silu, softmax_last_dim  # adopter-kernels>=0.1.0\nfrom torch import nn\n"),
])
def test_a_new_import_goes_where_isort_puts_it(source, expected):
    assert add_imports(cst.parse_module(source), KERNELS, "litgpt").code == expected


def test_a_file_without_leading_imports_keeps_libcst_placement():
    code = add_imports(cst.parse_module("x = 1\n"), KERNELS, "m").code
    assert "from adopter_kernels import gated_silu  # adopter-kernels>=0.1.0\n" in code and code.endswith("x = 1\n")


def test_the_requirement_a_patched_file_names_is_the_kernels_distribution_s_version():
    import tomllib

    from conftest import ROOT
    from adopter.rewrite.kernel_sets import KERNELS_REQUIREMENT

    version = tomllib.loads((ROOT / "kernels" / "pyproject.toml").read_text())["project"]["version"]
    assert KERNELS_REQUIREMENT == f"adopter-kernels>={version}"
