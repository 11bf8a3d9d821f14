/**
 * The pure decisions of the Route controller: the Certificate a Route needs (issue 10 contract §4: same
 * name, ownerReference to the Route, spec {dnsNames: [host], node}, issuer and renewBefore left to the
 * Mesh) and the Route's status (certificateRef and Ready, which is True only when the Certificate is Ready
 * and the node's agent reports the route's HttpsProxy resource Applied).
 */
import { isDeepStrictEqual } from 'node:util';
import { findCondition, setCondition } from '../api/meta/conditions.ts';
import { API_VERSION, type OwnerReference } from '../api/meta/types.ts';
import { controllerReference } from '../api/meta/owner-reference.ts';
import type { Certificate, Declaration, Route, RouteStatus } from '../api/v1alpha1/generated/index.ts';
import { routeOwner } from '../api/v1alpha1/render-routes.ts';

/** The Route's ownerReference that its Certificate carries. */
export function routeReference(route: Route): OwnerReference {
  return controllerReference('Route', route);
}

/** True when `cert` is controlled by `route` (same uid). */
export function ownedBy(cert: Certificate, route: Route): boolean {
  return (cert.metadata.ownerReferences ?? []).some(
    (r) => r.kind === 'Route' && r.controller === true && r.uid === route.metadata.uid,
  );
}

/**
 * The Certificate to write for `route`: a new one when `current` is missing, `current` with the wanted
 * spec when it differs, undefined when nothing needs writing (or `current` belongs to something else).
 */
export function certificateToWrite(route: Route, current: Certificate | undefined): Certificate | undefined {
  const spec = { dnsNames: [route.spec.host], node: route.spec.node };
  if (!current) {
    return {
      apiVersion: API_VERSION,
      kind: 'Certificate',
      metadata: { name: route.metadata.name, ownerReferences: [routeReference(route)] },
      spec,
    };
  }
  if (!ownedBy(current, route)) return undefined;
  const wanted = { ...current.spec, ...spec };
  return isDeepStrictEqual(current.spec, wanted) ? undefined : { ...current, spec: wanted };
}

/** Why a Route is or is not Ready. */
function readiness(
  route: Route,
  cert: Certificate | undefined,
  decl: Declaration | undefined,
): { status: 'True' | 'False'; reason: string; message: string } {
  const name = route.metadata.name ?? '';
  if (!cert)
    return { status: 'False', reason: 'CertificatePending', message: `certificate "${name}" is not created yet` };
  if (!ownedBy(cert, route))
    return {
      status: 'False',
      reason: 'CertificateConflict',
      message: `certificate "${name}" belongs to another object`,
    };
  const ready = findCondition(cert.status?.conditions, 'Ready');
  if (ready?.status !== 'True') {
    const why = ready?.message ?? 'not issued yet';
    return { status: 'False', reason: 'CertificateNotReady', message: `certificate "${name}": ${why}` };
  }
  const serveId = `${routeOwner(name)}/serve`;
  const result = decl?.status?.results?.find((r) => r.id === serveId);
  if (result?.state !== 'Applied') {
    const why = result ? `${result.state}${result.message ? `: ${result.message}` : ''}` : 'not applied yet';
    return { status: 'False', reason: 'NotServed', message: `node ${route.spec.node} does not serve it: ${why}` };
  }
  return { status: 'True', reason: 'Served', message: `node ${route.spec.node} serves ${route.spec.host} with TLS` };
}

/** The Route's status from its Certificate and its node's Declaration. */
export function routeStatus(a: {
  route: Route;
  cert: Certificate | undefined;
  declaration: Declaration | undefined;
  now: string;
}): RouteStatus {
  const { route } = a;
  const ready = readiness(route, a.cert, a.declaration);
  return {
    observedGeneration: route.metadata.generation ?? 0,
    certificateRef: route.metadata.name,
    conditions: setCondition(route.status?.conditions ?? [], { type: 'Ready', ...ready }, a.now),
  };
}
