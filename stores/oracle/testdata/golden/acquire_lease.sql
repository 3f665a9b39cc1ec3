MERGE INTO scheduler_lease l
	USING (SELECT CAST(:1 AS VARCHAR2(255 CHAR)) AS name, CAST(:2 AS VARCHAR2(255 CHAR)) AS owner,
		CAST(:3 AS TIMESTAMP(6)) AS expires_at, CAST(:4 AS TIMESTAMP(6)) AS now FROM DUAL) s
	ON (l.name = s.name)
	WHEN MATCHED THEN UPDATE SET l.owner = s.owner, l.expires_at = s.expires_at
		WHERE l.owner = s.owner OR l.expires_at <= s.now
	WHEN NOT MATCHED THEN INSERT (name, owner, expires_at) VALUES (s.name, s.owner, s.expires_at)
