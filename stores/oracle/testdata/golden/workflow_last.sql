SELECT workflow_id FROM scheduler_job WHERE workflow_id < :1 ORDER BY workflow_id DESC FETCH FIRST :2 ROWS ONLY
