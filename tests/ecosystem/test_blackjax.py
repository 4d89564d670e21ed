"""blackjax: HMC and NUTS (200 jitted steps in a scan) on a correlated 2-D Gaussian: the first samples and the
sample mean equal real JAX 0.10.2's for the same keys (recorded from tests/ecosystem/programs.py)."""
import programs
from ecosystem_util import assert_matches, use_library

EXPECTED = {"hmc_first": [[-0.4656740427017212, 1.1700918674468994], [0.09192630648612976, -1.3689826726913452], [-0.8634482622146606, -1.2135192155838013]], "hmc_mean": [-0.006627336144447327, 0.036168601363897324], "nuts_first": [[0.4772067666053772, -1.1708940267562866], [0.22947080433368683, -1.468620777130127], [1.1488574743270874, 0.19659511744976044]], "nuts_mean": [0.011160715483129025, -0.12301035970449448]}


def test_blackjax_hmc_nuts():
    use_library("blackjax")
    assert_matches(programs.blackjax_program(), EXPECTED)
