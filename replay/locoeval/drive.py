"""Drive one agent through an outline's conversation: its queries voiced by a mock user.

The runner (``replay.core.runner``) owns the pair (its agent, ledger, transcript, result);
these functions only talk to the agent and report progress as ``tick(done, total)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from replay.locoeval.llmuser import LLMUser, ReferenceQueries
from replay.locoeval.mockuser import TemplateUser, user_label
from replay.locoeval.outline import Outline

if TYPE_CHECKING:
    from memory.index.embed import Embedder
    from memory.index.repo import RepoIndex
    from memory.turn.agent import Agent
    from replay.benchmark import Tick
    from replay.core.runner import ReplayConfig


async def converse(agent: Agent, outline: Outline, repo: RepoIndex | None,
                   config: ReplayConfig, embedder: Embedder, result: dict[str, Any],
                   tick: Tick) -> None:
    """The outline's queries, voiced by the template or the LLM mock user; what the mock
    user was and spent goes into ``result``."""
    from memory.llm.client import LLM, LLMConfig
    from replay.locoeval.options import LocoevalOptions

    options = LocoevalOptions.of(config)
    total = len(outline.queries())
    result["mock_user"] = user_label(options.mock_user, options.mock_user_why)
    result["reference_queries"] = "skipped (template user)"
    result["revision_cues"] = options.revision_cues
    if options.mock_user == "llm":
        model = options.user_model or config.model
        refs = options.references
        user = LLMUser(outline, LLM(LLMConfig(model=model)), repo, config.seed,
                       ReferenceQueries.from_file(refs, embedder) if refs else None,
                       options.revision_cues)
        result["user_model"] = model
        result["reference_queries"] = user.reference_status
        previous = ""
        for n in range(total):
            turn = await agent.ask(await user.message(n, previous))
            previous = turn.assistant
            tick(n + 1, total + 1)
        result["user_tokens"] = user.llm.ledger.tokens
        result["user_usage"] = user.llm.ledger.to_dict()
        result["user_fallbacks"] = user.fallbacks
        result["reference_queries"] = user.reference_status
        return
    template = TemplateUser(outline, config.seed, options.revision_cues)
    for n, (_, text) in enumerate(template.conversation()):
        await agent.ask(text)
        tick(n + 1, total + 1)
