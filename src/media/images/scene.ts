// The prompt read as a scene for the built-in painter (art.ts): time of day, terrain, weather and
// named colours, from the prompt's words; and the scene said back in words (`revised_prompt`).

export type Rgb = [number, number, number];

export type Time = 'day' | 'sunrise' | 'sunset' | 'night';
type Terrain = 'mountains' | 'hills' | 'desert' | 'plain';

/** What the prompt asks for, by its words. */
export interface Scene {
  time: Time;
  terrain: Terrain;
  water: boolean;
  forest: boolean;
  city: boolean;
  snow: boolean;
  rain: boolean;
  fog: boolean;
  clouds: boolean;
  flowers: boolean;
  abstract: boolean;
  colours: { name: string; rgb: Rgb }[];
}

const COLOURS: Record<string, Rgb> = {
  red: [214, 48, 49],
  crimson: [186, 24, 56],
  orange: [243, 134, 48],
  amber: [255, 176, 46],
  yellow: [249, 218, 74],
  gold: [222, 178, 62],
  golden: [222, 178, 62],
  green: [64, 160, 88],
  emerald: [32, 150, 104],
  teal: [30, 140, 140],
  turquoise: [64, 200, 190],
  cyan: [80, 200, 230],
  blue: [52, 110, 220],
  azure: [70, 150, 240],
  navy: [28, 40, 110],
  indigo: [70, 50, 150],
  purple: [130, 70, 180],
  violet: [150, 90, 210],
  lavender: [180, 160, 230],
  pink: [240, 130, 180],
  magenta: [210, 60, 170],
  brown: [130, 86, 52],
  white: [245, 245, 245],
  silver: [190, 195, 205],
  grey: [128, 132, 140],
  gray: [128, 132, 140],
  black: [24, 24, 28],
};

const WORDS: Record<Exclude<keyof Scene, 'colours' | 'time' | 'terrain'>, string[]> = {
  water: [
    'sea',
    'ocean',
    'lake',
    'river',
    'harbour',
    'harbor',
    'beach',
    'coast',
    'bay',
    'port',
    'water',
    'pond',
    'fjord',
    'shore',
    'island',
    'waves',
    'boat',
    'sail',
    'canal',
  ],
  forest: [
    'forest',
    'tree',
    'trees',
    'woods',
    'wood',
    'pine',
    'pines',
    'jungle',
    'park',
    'garden',
    'orchard',
    'grove',
    'taiga',
  ],
  city: [
    'city',
    'town',
    'village',
    'street',
    'skyline',
    'building',
    'buildings',
    'house',
    'houses',
    'bakery',
    'shop',
    'cafe',
    'café',
    'tower',
    'castle',
    'church',
    'office',
    'restaurant',
    'bridge',
    'lisbon',
    'paris',
    'berlin',
    'rome',
    'madrid',
    'vienna',
    'amsterdam',
    'prague',
    'london',
    'porto',
    'harbourfront',
  ],
  snow: ['snow', 'snowy', 'winter', 'ice', 'icy', 'frozen', 'blizzard', 'glacier'],
  rain: ['rain', 'rainy', 'storm', 'stormy', 'drizzle', 'thunder', 'monsoon'],
  fog: ['fog', 'foggy', 'mist', 'misty', 'haze', 'hazy', 'smoke'],
  clouds: ['cloud', 'clouds', 'cloudy', 'overcast', 'sky'],
  flowers: [
    'flower',
    'flowers',
    'meadow',
    'tulip',
    'tulips',
    'lavender',
    'poppy',
    'poppies',
    'spring',
    'bloom',
    'blossom',
  ],
  abstract: ['abstract', 'pattern', 'geometric', 'fractal', 'texture', 'swirl', 'swirls', 'shapes'],
};

function has(words: Set<string>, list: readonly string[]): boolean {
  return list.some((w) => words.has(w));
}

/** The scene a prompt describes. */
export function readScene(prompt: string): Scene {
  const words = new Set(prompt.toLowerCase().match(/[\p{L}]+/gu) ?? []);
  const time: Time = has(words, ['night', 'midnight', 'moon', 'moonlight', 'stars', 'starry', 'nocturnal'])
    ? 'night'
    : has(words, ['sunset', 'dusk', 'evening', 'twilight'])
      ? 'sunset'
      : has(words, ['sunrise', 'dawn', 'morning', 'daybreak'])
        ? 'sunrise'
        : 'day';
  const terrain: Terrain = has(words, [
    'mountain',
    'mountains',
    'alps',
    'peak',
    'peaks',
    'alpine',
    'volcano',
    'cliff',
    'cliffs',
    'glacier',
  ])
    ? 'mountains'
    : has(words, ['desert', 'dune', 'dunes', 'sahara', 'sand', 'canyon'])
      ? 'desert'
      : has(words, [
            'hill',
            'hills',
            'valley',
            'countryside',
            'vineyard',
            'field',
            'fields',
            'farm',
            'meadow',
          ])
        ? 'hills'
        : 'plain';
  const colours = [...words].flatMap((w) => (COLOURS[w] ? [{ name: w, rgb: COLOURS[w] }] : []));
  const scene: Scene = {
    time,
    terrain,
    colours,
    water: has(words, WORDS.water),
    forest: has(words, WORDS.forest),
    city: has(words, WORDS.city),
    snow: has(words, WORDS.snow),
    rain: has(words, WORDS.rain),
    fog: has(words, WORDS.fog),
    clouds: has(words, WORDS.clouds),
    flowers: has(words, WORDS.flowers),
    abstract: has(words, WORDS.abstract),
  };
  const landscape =
    scene.water ||
    scene.forest ||
    scene.city ||
    scene.terrain !== 'plain' ||
    scene.time !== 'day' ||
    scene.snow;
  // Nothing a landscape is made of: abstract art in the prompt's colours.
  if (!landscape && !scene.flowers && !scene.rain && !scene.fog) scene.abstract = true;
  return scene;
}

/** The scene in words, as `revised_prompt`. */
export function describeScene(scene: Scene): string {
  if (scene.abstract) {
    const named = scene.colours.map((c) => c.name);
    return `Abstract flowing shapes${named.length ? ` in ${named.join(', ')}` : ''}.`;
  }
  const parts: string[] = [];
  parts.push(
    {
      day: 'A landscape by day',
      sunrise: 'A landscape at sunrise',
      sunset: 'A landscape at sunset',
      night: 'A landscape at night under stars',
    }[scene.time],
  );
  if (scene.terrain !== 'plain')
    parts.push({ mountains: 'mountains', hills: 'rolling hills', desert: 'desert dunes' }[scene.terrain]);
  if (scene.city) parts.push('a town skyline');
  if (scene.forest) parts.push('a forest');
  if (scene.flowers) parts.push('a flower meadow');
  if (scene.water) parts.push('water reflecting the sky');
  if (scene.snow) parts.push('falling snow');
  if (scene.rain) parts.push('rain');
  if (scene.fog) parts.push('fog');
  if (scene.colours.length) parts.push(`in ${scene.colours.map((c) => c.name).join(', ')}`);
  return `${parts.join(', ')}.`;
}
