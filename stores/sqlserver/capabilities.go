package sqlserver
