/**
 * Announced (after its commit) by a feature that changed what the gate leaves out: a test quarantined or released,
 * a failure signature's triage or issue changed. The gate evaluates again the latest finished run of each of the
 * project's streams in which one of `testIds` ran (all of them without `testIds`). A feature that wants the verdict
 * stored before it answers calls GateService.reevaluateLatest and awaits it instead.
 */
export const GATE_REEVALUATE = 'gate.reevaluate';

export interface GateReevaluate {
  projectId: string;
  testIds?: string[];
}
