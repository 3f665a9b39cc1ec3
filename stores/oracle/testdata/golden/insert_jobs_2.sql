INSERT INTO scheduler_job (job_id, task_name, payload, status, priority, scheduled_time, created_time,
	attempts, max_retries, backoff_kind, backoff_param_us, claim_seq, crash_count, owner_node,
	claimed_time, finished_time, last_error, job_result, result_type, idempotency_key, params,
	resource_name, resource_limit, trace_context) VALUES (:1, :2, :3, 'PENDING', :4, :5, :6, :7, :8, :9, :10, :11, :12, :13, :14, :15, :16, :17, :18, :19, :20, :21, :22, :23),
	(:24, :25, :26, 'PENDING', :27, :28, :29, :30, :31, :32, :33, :34, :35, :36, :37, :38, :39, :40, :41, :42, :43, :44, :45, :46)
