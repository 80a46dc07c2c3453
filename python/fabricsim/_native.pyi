"""Type stubs of the native module (built from crates/fabricsim-py)."""

from os import PathLike
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

__version__: str

class ScenarioError(ValueError):
    key: Optional[str]

class SimulationError(RuntimeError): ...

class NativeResults:
    def table(self, name: str) -> List[Tuple[str, str, Union[bytes, List[str]], Optional[bytes]]]: ...
    def summary_json(self) -> str: ...
    def resolved_scenario(self) -> str: ...
    def save(self, dir: Union[str, PathLike[str]]) -> None: ...

def run(
    source: str,
    is_path: bool,
    overrides: List[str],
    out: Optional[Union[str, PathLike[str]]] = None,
    progress: Optional[Callable[[float, float, int, int, int], Any]] = None,
    threads: int = 1,
) -> NativeResults: ...
def schema() -> Dict[str, Dict[str, Any]]: ...
def summary_schema() -> List[Tuple[str, str, str]]: ...
