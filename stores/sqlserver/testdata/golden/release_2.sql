UPDATE j SET j.status = 'PENDING', j.owner_node = NULL, j.scheduled_time = @p1, j.claim_seq = j.claim_seq + 1
	OUTPUT v.i
	FROM scheduler_job AS j WITH (ROWLOCK)
	JOIN (VALUES (@p2, @p3, @p4), (@p5, @p6, @p7)) AS v (i, id, seq) ON j.job_id = v.id
	WHERE j.claim_seq = v.seq AND j.status = 'RUNNING'
