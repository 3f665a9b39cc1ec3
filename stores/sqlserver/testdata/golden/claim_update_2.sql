UPDATE scheduler_job SET status = 'RUNNING', owner_node = @p1, claim_seq = claim_seq + 1, claimed_time = @p2
	OUTPUT inserted.job_id
	WHERE job_id IN (@p3, @p4) AND status = 'PENDING';
SELECT j.job_id, j.task_name, j.payload, CASE WHEN j.payload IS NULL THEN 1 ELSE 0 END, j.status, j.priority, j.scheduled_time, j.created_time, j.attempts, j.max_retries, j.backoff_kind, j.backoff_param_us, j.claim_seq, j.crash_count, j.owner_node, j.claimed_time, j.finished_time, j.last_error, j.job_result, CASE WHEN j.job_result IS NULL THEN 1 ELSE 0 END, j.result_type, j.idempotency_key, j.params, j.resource_name, j.resource_limit, j.workflow_id, j.dep_count, j.dep_waiting, j.dep_children, j.trace_context, j.snoozes, (SELECT t.tag AS t FROM scheduler_job_tag t WHERE t.job_id = j.job_id FOR JSON PATH)
	FROM scheduler_job j WHERE j.job_id IN (@p3, @p4) AND j.status = 'RUNNING'
