// GET /v1/models and /v1/models/{model}: the catalogue; any valid key may read it.
import { NotFoundError } from '../platform/errors.ts';
import { operationRouter, type OperationRouter } from '../platform/route.ts';
import { type EngineNames, getModel, listModelObjects, toModelObject } from './catalogue.ts';

/** `engines` names what serves each model here, so each description says it (the reference engine is no language model). */
export function createModelsRouter(engines: EngineNames = {}) {
  const api: OperationRouter = operationRouter();
  api.on('listModels', () => ({
    status: 200,
    body: { object: 'list', data: listModelObjects(engines), has_more: false, next_cursor: null },
  }));
  api.on('getModel', ({ path }) => {
    const model = getModel(path.model);
    if (!model) {
      throw new NotFoundError('model_not_found', `The model '${path.model}' does not exist.`, {
        param: 'model',
      });
    }
    return { status: 200, body: toModelObject(model, engines) };
  });
  return api;
}
