from shinka.core.runner import AsyncEvolutionRunner, EvolutionConfig

__all__ = ["AsyncEvolutionRunner", "EvolutionConfig"]
