UPDATE scheduler_lease WITH (UPDLOCK, SERIALIZABLE) SET owner = @p2, expires_at = @p3
	WHERE name = @p1 AND (owner = @p2 OR expires_at <= @p4);
IF @@ROWCOUNT = 0 AND NOT EXISTS (SELECT 1 FROM scheduler_lease WITH (UPDLOCK, SERIALIZABLE) WHERE name = @p1)
	INSERT INTO scheduler_lease (name, owner, expires_at) VALUES (@p1, @p2, @p3);
