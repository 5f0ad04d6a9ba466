// Command etcd is etcd's own server entry point (go.etcd.io/etcd/server/v3/etcdmain), built at the
// version this module pins, for the reference control plane of the differential suite.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
