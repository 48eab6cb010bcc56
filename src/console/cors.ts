// The console (served by the model API) reads the directory API's usage with its session cookie,
// across origins: on one host the two services differ by port only (`npm start`: :8080 and
// :8081), in production they are MODEL_API_PUBLIC_URL and the directory's own address. CORS with
// credentials is allowed for those origins alone, on GET /v1/usage alone: a page of any other
// origin cannot read the answer, and the cookie (SameSite=Lax) is never sent cross-site.
import { type NextFunction, type Request, type Response, Router } from 'express';

export function consoleCors(modelPublicUrl: string): Router {
  const allowed = new URL(modelPublicUrl).origin;
  const router = Router();
  router.use('/v1/usage', (req: Request, res: Response, next: NextFunction) => {
    const origin = req.get('origin');
    if (!origin) return next();
    let sameHost = false;
    try {
      sameHost = new URL(origin).hostname === new URL(`http://${req.get('host') ?? ''}`).hostname;
    } catch {
      return next();
    }
    if (origin === allowed || sameHost) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      res.setHeader('Access-Control-Expose-Headers', 'x-request-id');
      res.append('Vary', 'Origin');
    }
    next();
  });
  return router;
}
