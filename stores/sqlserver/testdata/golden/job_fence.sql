SELECT status, claim_seq FROM scheduler_job WITH (REPEATABLEREAD, ROWLOCK) WHERE job_id = @p1
