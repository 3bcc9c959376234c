-- The audit rows, in the audit file, carry each result's size (see
-- migrations/sqlite/audit/0009_result_tokens.sql); the main file has nothing to add. The
-- version is kept so both backends list the same migrations.
SELECT 1;
