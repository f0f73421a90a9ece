#!/bin/sh
# The seed article's scenario the way it is scripted today: unshare(1),
# mount(8), nsenter(1), findmnt(8). Runs entirely inside its own private
# mount namespace (unshare -m --propagation private), so the host is never
# touched. Exits non-zero if the kernel did not do what the article says.
exec unshare -m --propagation private sh -euc '
  mount -t tmpfs sandbox /tmp
  mkdir /tmp/X /tmp/Y /tmp/Z
  mount -t tmpfs sda3 /tmp/X && mount --make-shared /tmp/X
  mount -t tmpfs sda5 /tmp/Y && mount --make-shared /tmp/Y
  unshare -m --propagation unchanged sleep 60 &
  pid=$!
  while [ "$(readlink /proc/$pid/ns/mnt)" = "$(readlink /proc/self/ns/mnt)" ]; do :; done
  mount --bind /tmp/X /tmp/Z
  x1=$(findmnt -n -o PROPAGATION /tmp/X)
  gx1=$(grep " /tmp/X " /proc/self/mountinfo | grep -o "shared:[0-9]*")
  gz1=$(grep " /tmp/Z " /proc/self/mountinfo | grep -o "shared:[0-9]*")
  gx2=$(nsenter -t $pid -m grep " /tmp/X " /proc/self/mountinfo | grep -o "shared:[0-9]*")
  z2=$(nsenter -t $pid -m findmnt -n /tmp/Z || true)
  kill $pid
  [ "$x1" = shared ] && [ "$gx1" = "$gz1" ] && [ "$gx1" = "$gx2" ] && [ -z "$z2" ]
'
