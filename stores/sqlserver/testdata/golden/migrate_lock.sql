DECLARE @rc INT;
EXEC @rc = sp_getapplock @Resource = 'ratchet.migrate', @LockMode = 'Exclusive', @LockOwner = 'Transaction', @LockTimeout = 60000;
IF @rc < 0 THROW 51001, 'ratchet: migration lock not granted', 1;
