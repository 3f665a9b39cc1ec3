module github.com/ratchet-go/ratchet/ddl

go 1.26
