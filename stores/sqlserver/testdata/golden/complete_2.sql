UPDATE j SET
		j.status = v.st,
		j.finished_time = CASE WHEN v.st = 'PENDING' THEN j.finished_time ELSE v.fin END,
		j.scheduled_time = CASE WHEN v.st = 'PENDING' THEN v.retry_at ELSE j.scheduled_time END,
		j.attempts = CASE WHEN v.st = 'SUCCEEDED' THEN j.attempts ELSE v.att END,
		j.last_error = CASE WHEN v.st = 'SUCCEEDED' THEN j.last_error ELSE v.err END,
		j.job_result = CASE WHEN v.st = 'SUCCEEDED' THEN v.res ELSE j.job_result END,
		j.result_type = CASE WHEN v.st = 'SUCCEEDED' THEN v.rtype ELSE j.result_type END,
		j.owner_node = CASE WHEN v.st = 'PENDING' THEN NULL ELSE j.owner_node END
	OUTPUT v.i
	FROM scheduler_job AS j WITH (ROWLOCK)
	JOIN (VALUES (@p1, @p2, @p3, @p4, @p5, @p6, @p7, @p8, @p9, @p10), (@p11, @p12, @p13, @p14, @p15, @p16, @p17, @p18, @p19, @p20))
		AS v (i, id, seq, st, fin, retry_at, att, err, res, rtype) ON j.job_id = v.id
	WHERE j.claim_seq = v.seq AND j.status = 'RUNNING'
