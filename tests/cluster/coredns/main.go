// Command coredns is upstream CoreDNS with only the plugins the test cluster's Corefile
// uses, so that the build skips the cloud-provider SDKs the full plugin set pulls in.
// The plugin chain order stays upstream's (dnsserver.Directives).
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() { coremain.Run() }
