module github.com/fixpoint/fixpoint

go 1.26.8
