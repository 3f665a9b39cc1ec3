DECLARE @rc INT;
EXEC @rc = sp_getapplock @Resource = @p2, @LockMode = 'Exclusive', @LockOwner = 'Transaction', @LockTimeout = @p1;
IF @rc < 0 THROW 51000, 'ratchet: resource permit lock not granted', 1;
EXEC @rc = sp_getapplock @Resource = @p3, @LockMode = 'Exclusive', @LockOwner = 'Transaction', @LockTimeout = @p1;
IF @rc < 0 THROW 51000, 'ratchet: resource permit lock not granted', 1;
SELECT r.n, (SELECT COUNT(*) FROM scheduler_job j WHERE j.resource_name = r.n AND j.status = 'RUNNING')
	FROM (VALUES (@p4), (@p5)) AS r(n)
