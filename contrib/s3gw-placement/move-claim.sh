#!/bin/sh
# Moves an installed s3gw's data onto a StorageClass, storageclass.yaml's
# longhorn-s3gw by default, under the claim name s3gw's chart gives it,
# <release>-s3gw-pvc, so that s3gw's Deployment and its next `helm upgrade`
# find it. Needs kubectl (or $KUBECTL) and a class that retains its
# volumes (reclaimPolicy: Retain):
#
#   contrib/s3gw-placement/move-claim.sh <namespace> <release> [storage class]
#
# It stops s3gw (scales its gateway Deployment to 0), keeps the old volume
# (its PV's reclaim policy becomes Retain), clones the claim into the class
# (Longhorn's CSI cloning), gives the clone's volume the chart's claim name
# (a temporary claim goes, the class keeps its volume, a new claim of that
# name binds it), starts s3gw again and prints the `helm upgrade` that
# tells s3gw's chart the class. Each step says what it does; run again after an interruption,
# it goes on from a bound clone or a moved claim.
set -eu
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: $0 <namespace> <release> [storage class, default longhorn-s3gw]" >&2
	exit 2
fi
ns=$1 release=$2 class=${3:-longhorn-s3gw}
claim=$release-s3gw-pvc clone=$release-s3gw-pvc-$class deployment=$release-s3gw
k() { "${KUBECTL:-kubectl}" -n "$ns" "$@"; }
field() { k get "$1" "$2" -o jsonpath="$3"; }

policy=$(k get storageclass "$class" -o jsonpath='{.reclaimPolicy}')
if [ "$policy" != Retain ]; then
	echo "StorageClass $class does not retain its volumes (reclaimPolicy: Retain): the move would lose the copy" >&2
	exit 1
fi

if k get pvc "$claim" >/dev/null 2>&1 && [ "$(field pvc "$claim" '{.spec.storageClassName}')" = "$class" ]; then
	echo "Claim $ns/$claim is already of StorageClass $class."
else
	if ! k get pvc "$clone" >/dev/null 2>&1 || [ -z "$(field pvc "$clone" '{.spec.volumeName}')" ]; then
		echo "Stopping s3gw: scaling Deployment $ns/$deployment to 0."
		k scale deployment "$deployment" --replicas=0
		gateway="app.kubernetes.io/instance=$release,app.kubernetes.io/component=gateway"
		if [ -n "$(k get pod -l "$gateway" -o name)" ]; then
			k wait --for=delete pod -l "$gateway" --timeout=5m
		fi
		old=$(field pvc "$claim" '{.spec.volumeName}')
		size=$(field pvc "$claim" '{.spec.resources.requests.storage}')
		echo "Keeping the old volume: PersistentVolume $old retains its data when the claim goes."
		k patch pv "$old" -p '{"spec":{"persistentVolumeReclaimPolicy":"Retain"}}'
		echo "Cloning $ns/$claim into $ns/$clone of StorageClass $class."
		k apply -f - <<CLAIM
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: $clone
spec:
  storageClassName: $class
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: $size
  dataSource:
    kind: PersistentVolumeClaim
    name: $claim
CLAIM
		k wait --for=jsonpath='{.status.phase}'=Bound "pvc/$clone" --timeout=30m
	fi
	volume=$(field pvc "$clone" '{.spec.volumeName}')
	size=$(field pvc "$clone" '{.spec.resources.requests.storage}')
	echo "Giving PersistentVolume $volume the claim name $claim."
	k delete pvc "$clone" --wait
	k patch pv "$volume" --type json -p '[{"op":"remove","path":"/spec/claimRef"}]'
	k delete pvc "$claim" --ignore-not-found --wait
	k apply -f - <<CLAIM
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: $claim
spec:
  storageClassName: $class
  volumeName: $volume
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: $size
CLAIM
	k wait --for=jsonpath='{.status.phase}'=Bound "pvc/$claim" --timeout=5m
fi

echo "Starting s3gw again: scaling Deployment $ns/$deployment to 1."
k scale deployment "$deployment" --replicas=1

cat <<NEXT
Done. Now tell s3gw's chart the class, and keep it in every later upgrade
(a claim's class cannot change, so an upgrade with another one fails):
  helm upgrade $release s3gw/s3gw -n $ns --reuse-values \\
    --set storageClass.create=false --set storageClass.name=$class \\
    --post-renderer <contrib/s3gw-placement/post-render.sh, or the s3gw-placement plugin>
The old volume stays (Retain) until you delete its PersistentVolume and its Longhorn volume.
NEXT
