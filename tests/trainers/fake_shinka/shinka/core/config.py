from shinka.core.async_runner import EvolutionConfig

__all__ = ["EvolutionConfig"]
