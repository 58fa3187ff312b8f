"""The compact service: per-site busy chips and per-region (or pooled) customer service.

Families (chips; the maths and the split back to sites in the modules that own them):

* ``region_balance`` (:mod:`optimizer.components.region`): sum_{k,g} serve[c,e,k,w,g,p]
  + sum_q pool_draw[c,e,q,w,p] = sum_{s in e} busy[c,s,w,p]
* ``pool_balance`` (:mod:`optimizer.components.pool`): sum_{e in q} pool_draw[c,e,q,w,p]
  = sum_{k,g} pool_serve[c,q,k,w,g,p]

No cost terms of its own: energy reads the busy columns, the demand penalties the
service columns (:class:`~optimizer.components.scenario.ScenarioColumns`).
"""

from __future__ import annotations

from optimizer.components.component import ColumnKind, Component
from optimizer.components.pool import FAMILIES as pool_families
from optimizer.components.region import FAMILIES as region_families

COMPONENT = Component(
    "service",
    columns=(
        ColumnKind("busy", "c/s/w/t", "chips", "chips at work at a site (compact)"),
        ColumnKind("serve", "c/e/k/w/g/t", "chips", "chips of a region serving a customer"),
        ColumnKind("pool_serve", "c/q/k/w/g/t", "chips", "chips of a region pool serving"),
        ColumnKind("pool_draw", "c/e/q/w/t", "chips", "chips of a region at work for a pool"),
    ),
    families=region_families + pool_families,
)
