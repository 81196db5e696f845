// Command etcd is upstream's etcd server, built from the Go module proxy for flotilla's test
// environment. Only the version pin in go.mod is ours.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
