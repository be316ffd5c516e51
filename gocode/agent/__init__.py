"""The orchestrator (decide → select → write → run → repair → answer) and its model clients."""

from gocode.agent.llm import ChatClient, Message, Reply, Usage, client_for
from gocode.agent.orchestrator import (
    DEFAULT_MAX_REPAIRS,
    Observer,
    Orchestrator,
    Step,
    SyncOrchestrator,
    Transcript,
    pick_model,
)
from gocode.errors import ModelError

__all__ = [
    "DEFAULT_MAX_REPAIRS",
    "ChatClient",
    "Message",
    "ModelError",
    "Observer",
    "Orchestrator",
    "Reply",
    "Step",
    "SyncOrchestrator",
    "Transcript",
    "Usage",
    "client_for",
    "pick_model",
]
