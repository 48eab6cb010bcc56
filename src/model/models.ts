// GET /v1/models and /v1/models/{model}: the catalogue; any valid key may read it.
import { Router } from 'express';
import { NotFoundError } from '../platform/errors.ts';
import { getModel, listModelObjects, toModelObject } from './catalogue.ts';

export function createModelsRouter(): Router {
  const router = Router();
  router.get('/v1/models', (_req, res) => {
    res.json({ object: 'list', data: listModelObjects(), has_more: false, next_cursor: null });
  });
  router.get('/v1/models/:model', (req, res) => {
    const model = getModel(req.params.model as string);
    if (!model) {
      throw new NotFoundError('model_not_found', `The model '${req.params.model}' does not exist.`, {
        param: 'model',
      });
    }
    res.json(toModelObject(model));
  });
  return router;
}
