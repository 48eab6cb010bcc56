-- What a succeeded workflow was billed: the price of the work done (docs/concierge.md), at most
-- the price set when the brief was accepted; null before success and for older workflows.
alter table concierge_workflows add column billed_nano bigint;
