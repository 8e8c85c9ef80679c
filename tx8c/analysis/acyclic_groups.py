"""Disjoint groups of a DAG's nodes whose graph of groups stays acyclic.

Grouping contracts each group to one node: the contracted graph must stay a DAG, or no
order of the groups respects every dependency (group A feeds group B and B feeds A). A
group can create a cycle by itself (a path leaves it and comes back: Conv -> Relu -> Add
with the group {Conv, Add}) or together with other groups ({a1, a2} and {b1, b2} with
a1 -> b2 and b1 -> a2 are each fine, not both).

`GroupedOrder` keeps a topological order of the nodes in which every accepted group is
contiguous; then the order, read with each group as one node, is a topological order of
the contracted graph, which is therefore acyclic. Adding a group G (nodes not yet in a
group) looks for a path that leaves G and comes back:

- in the current order every path of the contracted graph moves forward, so such a path
  only visits nodes between G's first and last node (the window), and a group met on the
  way is entered and left as a whole;
- if there is none, G is accepted and the window is rearranged: the nodes it holds that
  G reaches (R) move behind G, the others (S) in front of G, each part in its old order.
  No edge goes from R to S (S would be reached) nor between G and S in the wrong
  direction, so the new order is topological and G is contiguous; groups in the window
  lie wholly in R or in S and stay contiguous.

Cost: an accepted or rejected group costs the window's size (the search is bounded by
it), so grouping a graph costs O(n + sum of windows); windows are short when groups are
short paths of ops that follow each other, as pattern matches are.
"""

from __future__ import annotations

from collections.abc import Sequence


class GroupedOrder:
    """A topological order of nodes 0..n-1 (their numbering is one) with groups kept
    contiguous. `successors[i]`: the nodes that read node i."""

    def __init__(self, successors: Sequence[Sequence[int]]):
        n = len(successors)
        self.successors = successors
        self.order: list[int] = list(range(n))
        self.position: list[int] = list(range(n))
        self.group_of: list[int] = [-1] * n
        self.groups: list[list[int]] = []

    def add(self, members: Sequence[int]) -> bool:
        """Accept `members` (nodes in no group yet) as a group unless that makes the
        contracted graph cyclic; say whether it was accepted."""
        position = self.position
        nodes = sorted(set(members), key=position.__getitem__)
        if any(self.group_of[m] >= 0 for m in nodes):
            raise ValueError("GroupedOrder.add: a member is already in a group")
        first, last = position[nodes[0]], position[nodes[-1]]
        reached = self._reached_in_window(nodes, last)
        if reached is None:
            return False
        self._rearrange(first, last, set(nodes), reached)
        group = len(self.groups)
        for m in nodes:
            self.group_of[m] = group
        self.groups.append(nodes)
        return True

    def _unit(self, node: int) -> Sequence[int]:
        """The nodes that move with `node`: its group, or itself."""
        group = self.group_of[node]
        return self.groups[group] if group >= 0 else (node,)

    def _reached_in_window(self, nodes: list[int], last: int) -> set[int] | None:
        """The nodes before position `last` that `nodes` reach through other nodes, or
        None when one of `nodes` is among them (a cycle)."""
        members = set(nodes)
        position = self.position
        successors = self.successors
        stack = [s for m in nodes for s in successors[m] if s not in members]
        reached: set[int] = set()
        while stack:
            node = stack.pop()
            if node in reached:
                continue
            if node in members:
                return None
            unit = self._unit(node)
            if position[unit[0]] >= last:
                continue  # behind the group: no path from here leads back into it
            reached.update(unit)
            for u in unit:
                stack.extend(s for s in successors[u] if s not in reached)
        return reached

    def _rearrange(self, first: int, last: int, members: set[int], reached: set[int]):
        window = self.order[first:last + 1]
        before = [x for x in window if x not in members and x not in reached]
        group = [x for x in window if x in members]
        after = [x for x in window if x in reached]
        arranged = before + group + after
        self.order[first:last + 1] = arranged
        for offset, node in enumerate(arranged, first):
            self.position[node] = offset
