-- A run's story for the people reviewing it: the task it was given (the agent loop's
-- request, or what the host names) and how it ended (`ended_status`, a run status such
-- as `done` or `awaiting_approval`; `answer`, the final answer or why it stopped).
ALTER TABLE erp_agent_runs ADD COLUMN task TEXT;
ALTER TABLE erp_agent_runs ADD COLUMN ended_status TEXT;
ALTER TABLE erp_agent_runs ADD COLUMN answer TEXT;
ALTER TABLE erp_agent_runs ADD COLUMN ended_at TEXT;
