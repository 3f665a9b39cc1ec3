SELECT v.i FROM (VALUES (@p1, @p2, @p3), (@p4, @p5, @p6)) AS v (i, id, seq)
	JOIN scheduler_job j ON j.job_id = v.id AND j.claim_seq = v.seq AND j.status = 'RUNNING'
