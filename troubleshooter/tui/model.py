"""The TUI's headless state: what the user answered and measured, and where the tree walk stands.

No textual here. The screens are a face over :class:`Investigation`; every decision is the
engine's (``engine.walk``, ``engine.evaluate``, ``conditions.evaluate``). Tests drive it directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from troubleshooter.core import conditions

from troubleshooter.core import engine
from troubleshooter.core.engine import WalkState, answer_key
from troubleshooter.core.facts import Facts
from troubleshooter.core.probe import ProbeResult
from troubleshooter.core.ruleset import RuleSet
from troubleshooter.run.session import Session, sort_results
from troubleshooter.run.world_info import WorldInfo

STATE_VERSION = 1


@dataclass(frozen=True)
class ChecklistRow:
    """One red-flag checklist item and how it stands: auto-decided by facts, or ticked by hand."""

    checklist: str
    group: str
    item: dict
    status: str  # "flagged" | "cleared" | "ticked" | "open"
    auto: bool


class Investigation:
    """One troubleshooting session in the TUI: answers, probe results and analysed files; reportable at any time."""

    def __init__(self, rules: RuleSet):
        self.rules = rules
        self.results: list[ProbeResult] = []
        self.run_facts: dict[str, Any] = {}
        self.world = WorldInfo()
        self.static_facts: dict[str, dict[str, Any]] = {}  # source ("scan", "logs") -> facts
        self.analysed: list[str] = []
        self.tree_id: str | None = None
        self.answers: dict[str, str] = {}
        self.redo: list[tuple[str, str]] = []
        self.ticks: dict[str, bool] = {}

    # ---- evidence -----------------------------------------------------------------------------

    def add_results(self, results: Iterable[ProbeResult], run_facts: Mapping[str, Any] | None = None,
                    world: WorldInfo | None = None) -> None:
        """Record probe results; a re-run of a probe replaces its earlier results."""
        results = list(results)
        rerun = {r.probe for r in results}
        self.results = sort_results([r for r in self.results if r.probe not in rerun] + results)
        self.run_facts.update(run_facts or {})
        if world is not None:
            self.world.update(world)

    def add_static(self, source: str, facts: Mapping[str, Any], paths: Iterable[str]) -> None:
        """Record facts from analysing files (``scan`` or ``logs``)."""
        self.static_facts.setdefault(source, {}).update(facts)
        self.analysed += [p for p in paths if p not in self.analysed]

    @property
    def has_evidence(self) -> bool:
        """True once anything was answered, measured or analysed."""
        return bool(self.results or self.answers or self.static_facts or self.ticks)

    # ---- the walk -----------------------------------------------------------------------------

    @property
    def tree(self) -> dict | None:
        """The decision tree being walked, if any."""
        return self.rules.trees.get(self.tree_id) if self.tree_id else None

    def start_tree(self, tree_id: str) -> None:
        """Begin walking ``tree_id`` from its start (earlier probe results are kept)."""
        if tree_id not in self.rules.trees:
            raise KeyError(f"unknown decision tree {tree_id!r}")
        if tree_id != self.tree_id:
            self.tree_id, self.answers, self.redo = tree_id, {}, []

    def _base_session(self) -> Session:
        session = Session(self.rules, "tui", results=list(self.results), run_facts=dict(self.run_facts),
                          world=WorldInfo.from_dict(self.world.block()))
        for source, facts in self.static_facts.items():
            session.add_facts(facts, source)
        if self.answers:
            session.add_facts({answer_key(n): a for n, a in self.answers.items()}, "answers")
        return session

    @staticmethod
    def _view(session: Session) -> tuple[Facts, frozenset[str]]:
        obs = session.observations()
        facts = obs.rank_view(min(obs.ranks)) if obs.ranks else obs.facts  # trees read one rank's view
        return facts, frozenset(f.id for f in engine.evaluate(session.rules, obs))

    def facts(self) -> Facts:
        """Every fact gathered so far (world view overlaid with the first rank's facts)."""
        return self._view(self._base_session())[0]

    def state(self) -> WalkState | None:
        """Where the walk stands now (None before a tree is chosen)."""
        if self.tree is None:
            return None
        return engine.walk(self.tree, *self._view(self._base_session()))

    def answer(self, node_id: str, label: str) -> None:
        """Answer the question at ``node_id``."""
        node = self.tree["nodes"][node_id]
        if label not in (node.get("answers") or {}):
            raise ValueError(f"{label!r} is not an answer of {node_id!r}")
        self.answers[node_id] = label
        if self.redo and self.redo[-1] == (node_id, label):
            self.redo.pop()
        else:
            self.redo.clear()

    def back(self) -> bool:
        """Undo the last answer on the path; False at the first question."""
        state = self.state()
        answered = [n for n in (state.path[:-1] if state else []) if n in self.answers]
        if not answered:
            return False
        node_id = answered[-1]
        self.redo.append((node_id, self.answers.pop(node_id)))
        return True

    def forward(self) -> bool:
        """Re-apply the answer undone by :meth:`back`, if the walk is at that question again."""
        state = self.state()
        if not self.redo or state is None or state.node_id != self.redo[-1][0]:
            return False
        node_id, label = self.redo[-1]
        self.answer(node_id, label)
        return True

    def path_answers(self, state: WalkState | None = None) -> dict[str, str]:
        """Answers given on the current path, in path order."""
        state = state or self.state()
        return {n: self.answers[n] for n in (state.path if state else []) if n in self.answers}

    def counters(self, node: Mapping[str, Any]) -> list[dict]:
        """The rationalizations an ask node pre-empts (rules/rationalizations.yaml)."""
        return [self.rules.rationalizations[i] for i in node.get("counters") or [] if i in self.rules.rationalizations]

    # ---- reports ------------------------------------------------------------------------------

    def session(self) -> Session:
        """A Session holding everything gathered, mode ``tui``, with the walk (path, answers, conclusion)."""
        session = self._base_session()
        tree = self.tree
        if tree is not None:
            state = engine.walk(tree, *self._view(session))
            session.symptom = tree["symptom"]
            session.extra["walk"] = {"tree": tree["id"], "path": state.path, "answers": self.path_answers(state),
                                     "state": state.kind}
            if state.kind == "conclude" and state.conclusions:
                said = "; ".join(f"{n}: {a}" for n, a in self.path_answers(state).items())
                detail = f"decision tree '{tree['id']}' concluded at '{state.node_id}'" + (f" ({said})" if said else "")
                session.add_facts({f"walk.{c}": [{"detail": detail, "source": "walk"}] for c in state.conclusions},
                                  "walk")
        if self.analysed:
            session.extra["analysed"] = list(self.analysed)
        return session

    def report(self) -> dict[str, Any]:
        """The JSON report document of this session."""
        return self.session().report()

    # ---- red-flag checklists ------------------------------------------------------------------

    def checklist(self) -> list[ChecklistRow]:
        """Every red-flag item: decided by facts where ``flagged_when``/``cleared_when`` can tell, else by hand."""
        facts, findings = self._view(self._base_session())
        rows = []
        for cid, checklist in self.rules.checklists.items():
            if checklist.get("kind") != "red-flags":
                continue
            for group in checklist["groups"]:
                for item in group["items"]:
                    status = None
                    if item.get("flagged_when") and conditions.evaluate(item["flagged_when"], facts, findings) is True:
                        status = "flagged"
                    elif item.get("finding") and item["finding"] in findings:
                        status = "flagged"
                    elif item.get("cleared_when") and conditions.evaluate(item["cleared_when"], facts, findings) is True:
                        status = "cleared"
                    if status is None:
                        status = "ticked" if self.ticks.get(f"{cid}/{item['id']}") else "open"
                        rows.append(ChecklistRow(cid, group["title"], item, status, False))
                    else:
                        rows.append(ChecklistRow(cid, group["title"], item, status, True))
        return rows

    def toggle_tick(self, checklist_id: str, item_id: str) -> None:
        """Tick or untick a manual checklist item."""
        key = f"{checklist_id}/{item_id}"
        self.ticks[key] = not self.ticks.get(key, False)

    # ---- persistence --------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Everything needed to resume (the recovery file)."""
        return {"version": STATE_VERSION, "tree": self.tree_id, "answers": self.answers, "redo": self.redo,
                "results": [r.to_dict() for r in self.results], "world_facts": self.run_facts, "world": self.world.block(),
                "static_facts": self.static_facts, "analysed": self.analysed, "ticks": self.ticks}

    @classmethod
    def from_dict(cls, rules: RuleSet, data: Mapping[str, Any]) -> "Investigation":
        """Rebuild from :meth:`to_dict`; a tree the rules no longer have is dropped (its answers too)."""
        if data.get("version") != STATE_VERSION:
            raise ValueError(f"unsupported saved-state version {data.get('version')!r}")
        inv = cls(rules)
        inv.results = [ProbeResult.from_dict(r) for r in data.get("results") or []]
        inv.run_facts = dict(data.get("world_facts") or {})
        inv.world = WorldInfo.from_dict(data.get("world"))
        inv.static_facts = {k: dict(v) for k, v in (data.get("static_facts") or {}).items()}
        inv.analysed = list(data.get("analysed") or [])
        inv.ticks = {k: bool(v) for k, v in (data.get("ticks") or {}).items()}
        if data.get("tree") in rules.trees:
            inv.tree_id = data["tree"]
            inv.answers = {str(k): str(v) for k, v in (data.get("answers") or {}).items()}
            inv.redo = [tuple(p) for p in data.get("redo") or []]
        return inv
