// Command etcd is the upstream etcd server: etcd's own main package only calls
// etcdmain.Main, and living in the go.etcd.io/etcd/v3 root module it would pull
// etcdctl/etcdutl too, so this module builds the server alone.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
