from shinka.core.async_runner import ShinkaEvolveRunner
from shinka.core.config import EvolutionConfig

__all__ = ["EvolutionConfig", "ShinkaEvolveRunner"]
