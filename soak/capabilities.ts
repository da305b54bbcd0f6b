/**
 * The invariants each capability brings to the soak. A capability added to the catalogue is soaked by
 * its schedules at once; it adds its own invariants here.
 */
import { balloonResizeNotResent, balloonWithinFree, noPreemptionForBalloons } from './invariants/balloons.js';
import { guardsExplained, idsUniqueInSets } from './invariants/claims.js';
import { noPodEvicted } from './invariants/evictions.js';
import {
  featureEpochUses,
  featureMirrorAgrees,
  featureOffClean,
  featureStepsOnce,
  featureTransitionsEnd,
  featureWritesOnce,
} from './invariants/features.js';
import { historyContinuous } from './invariants/history.js';
import { adoptionRoundTrip, nothingInherited, oneIdPerCluster } from './invariants/identity.js';
import { deadLettersExplained, noSecrets } from './invariants/platform.js';
import { recommendationsReplay } from './invariants/replay.js';
import { balloonResizeNotStuck, resizeNotResent, resizeNotStuck } from './invariants/resizes.js';
import { noSizeRevertedFrom } from './invariants/reverted-from.js';
import { noForeignTouch } from './invariants/touches.js';
import type { SoakCapability } from './types.js';

export const SOAK_CAPABILITIES: SoakCapability[] = [
  {
    id: 'nodescope',
    invariants: [
      historyContinuous,
      recommendationsReplay,
      resizeNotResent,
      resizeNotStuck,
      noSizeRevertedFrom,
    ],
  },
  { id: 'claims', invariants: [guardsExplained, idsUniqueInSets, oneIdPerCluster, adoptionRoundTrip] },
  {
    id: 'balloons',
    invariants: [
      noPodEvicted,
      noPreemptionForBalloons,
      balloonWithinFree,
      balloonResizeNotResent,
      balloonResizeNotStuck,
    ],
  },
  {
    id: 'features',
    invariants: [
      featureTransitionsEnd,
      featureStepsOnce,
      featureEpochUses,
      featureWritesOnce,
      featureOffClean,
      featureMirrorAgrees,
      noForeignTouch,
    ],
  },
  { id: 'platform', invariants: [deadLettersExplained, noSecrets, nothingInherited] },
];
