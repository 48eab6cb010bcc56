// GET /v1/models and /v1/models/{model}: the catalogue; any valid key may read it.
import type { Router } from 'express';
import type {
  GetModelData,
  GetModelResponses,
  ListModelsData,
  ListModelsResponses,
} from '../../generated/model/client/types.gen.ts';
import { NotFoundError } from '../platform/errors.ts';
import { typedRouter } from '../platform/route.ts';
import { type EngineNames, getModel, listModelObjects, toModelObject } from './catalogue.ts';

/** `engines` names what serves each model here, so each description says it (the reference engine is no language model). */
export function createModelsRouter(engines: EngineNames = {}): Router {
  const api = typedRouter();
  api.get<ListModelsData, ListModelsResponses>('/v1/models', () => ({
    status: 200,
    body: { object: 'list', data: listModelObjects(engines), has_more: false, next_cursor: null },
  }));
  api.get<GetModelData, GetModelResponses>('/v1/models/{model}', ({ path }) => {
    const model = getModel(path.model);
    if (!model) {
      throw new NotFoundError('model_not_found', `The model '${path.model}' does not exist.`, {
        param: 'model',
      });
    }
    return { status: 200, body: toModelObject(model, engines) };
  });
  return api.router;
}
