"""The chat prompts a draft head is trained and measured on, built from fixed lists with a
seed: task templates over topics, coding tasks and arithmetic. Topics and coding tasks are
split once into a training and a held-out part, so a held-out prompt never names a topic
or task the head was trained on."""

import random

TOPICS = [
    "photosynthesis", "black holes", "the water cycle", "volcanoes", "earthquakes",
    "climate change", "renewable energy", "solar panels", "wind turbines", "nuclear power",
    "electric cars", "bicycles", "trains", "airplanes", "space exploration", "the Moon",
    "Mars", "the solar system", "comets", "telescopes", "microscopes", "vaccines",
    "the immune system", "sleep", "meditation", "running", "swimming", "yoga", "chess",
    "football", "basketball", "tennis", "the Olympic Games", "ancient Rome",
    "ancient Egypt", "the Renaissance", "the printing press", "the Industrial Revolution",
    "the internet", "smartphones", "computers", "artificial intelligence",
    "machine learning", "robots", "cybersecurity", "passwords", "databases",
    "cloud computing", "video games", "music theory", "the piano", "the guitar", "jazz",
    "classical music", "painting", "photography", "sculpture", "poetry", "novels",
    "libraries", "museums", "gardening", "houseplants", "composting", "bees", "ants",
    "dolphins", "whales", "elephants", "cats", "dogs", "birds", "butterflies", "forests",
    "deserts", "oceans", "coral reefs", "rivers", "mountains", "glaciers", "rainforests",
    "coffee", "tea", "chocolate", "bread", "cheese", "pizza", "rice", "vegetarian cooking",
    "baking", "nutrition", "vitamins", "drinking water", "recycling", "plastic pollution",
    "public transport", "city planning", "architecture", "bridges", "skyscrapers",
    "democracy", "taxes", "inflation", "banks", "saving money", "budgeting",
    "starting a business", "job interviews", "remote work", "time management",
    "public speaking", "learning a language", "friendship", "teamwork", "leadership",
    "volunteering", "traveling on a budget", "camping", "hiking", "the Great Wall of China",
    "the Amazon river", "Antarctica", "islands", "weather forecasts", "rainbows",
    "lightning", "magnets", "electricity", "batteries", "light", "sound", "gravity",
    "atoms", "chemistry experiments", "the periodic table", "DNA", "evolution",
    "dinosaurs", "fossils", "the human heart", "the brain", "exercise", "first aid",
    "board games", "puzzles", "magic tricks", "kites", "birthdays", "weddings",
    "holidays", "writing a diary", "handwriting", "typing", "origami", "knitting",
]

TEMPLATES = [
    "Explain {t} in simple terms.",
    "What are the main benefits of {t}?",
    "Write a short poem about {t}.",
    "Give me three tips for getting started with {t}.",
    "Write a short story that involves {t}.",
    "What is the history of {t}?",
    "Summarize the key ideas behind {t} in one paragraph.",
    "List five interesting facts about {t}.",
    "How would you explain {t} to a ten-year-old?",
    "What are some common misconceptions about {t}?",
    "Write a friendly email to a colleague about {t}.",
    "What questions should I ask an expert on {t}?",
    "Write a haiku about {t}.",
    "What are the pros and cons of {t}?",
    "Create a one-week study plan for learning about {t}.",
    "Why is {t} important?",
    "Describe {t} in three sentences.",
    "Write a short dialogue between two friends talking about {t}.",
    "What would the world be like without {t}?",
    "Give me a quiz of three questions about {t}, with answers.",
    "Tell me a fun fact about {t}.",
    "Write a product description for a book about {t}.",
    "What are the most important words to know when talking about {t}?",
    "How has {t} changed over the last hundred years?",
]

PAIR_TEMPLATES = [
    "Compare {t} and {u}.",
    "What do {t} and {u} have in common?",
    "Write a short story that connects {t} and {u}.",
]

CODING_TASKS = [
    "reverses a string", "checks whether a number is prime", "returns the factorial of n",
    "computes the n-th Fibonacci number", "counts the vowels in a string",
    "finds the largest number in a list", "removes duplicates from a list",
    "checks whether a word is a palindrome", "sorts a list of words by length",
    "converts Celsius to Fahrenheit", "sums the digits of an integer",
    "merges two sorted lists", "counts how often each word appears in a text",
    "returns the average of a list of numbers", "checks whether two strings are anagrams",
    "flattens a nested list", "finds the second smallest number in a list",
    "converts a decimal number to binary", "capitalizes the first letter of every word",
    "checks whether a year is a leap year", "computes the greatest common divisor of two numbers",
    "reads a text file and counts its lines", "validates a simple email address",
    "returns the n-th row of Pascal's triangle", "rotates a list by k positions",
    "finds all even numbers in a list", "computes the area of a circle",
    "transposes a matrix given as a list of lists",
]

CODING_TEMPLATES = [
    "Write a Python function that {c}.",
    "Write a JavaScript function that {c}, and explain how it works.",
    "How would I write a program that {c}?",
]

HELD_OUT_SHARE = 0.15


def _split(items, rng):
    items = sorted(items)
    rng.shuffle(items)
    cut = max(1, int(len(items) * HELD_OUT_SHARE))
    return items[cut:], items[:cut]


def _arithmetic(rng, n):
    out = []
    for _ in range(n):
        a, b, c = rng.randint(2, 99), rng.randint(2, 99), rng.randint(100, 999)
        out.append(rng.choice([
            f"What is {a} times {b}?",
            f"A train travels {c} km in {a % 9 + 2} hours. What is its average speed?",
            f"Solve for x: {a}x + {b} = {c}.",
            f"I have {c} apples and give away {a}. How many are left?",
            f"What is {a} percent of {c}?",
        ]))
    return out


def prompt_sets(seed=0):
    """(training prompts, held-out prompts), each a list of user messages."""
    rng = random.Random(seed)
    train_topics, held_topics = _split(TOPICS, rng)
    train_tasks, held_tasks = _split(CODING_TASKS, rng)

    def build(topics, tasks, pairs, arithmetic):
        prompts = [t.format(t=topic) for t in TEMPLATES for topic in topics]
        for _ in range(pairs):
            t, u = rng.sample(topics, 2)
            prompts.append(rng.choice(PAIR_TEMPLATES).format(t=t, u=u))
        prompts += [t.format(c=c) for t in CODING_TEMPLATES for c in tasks]
        prompts += _arithmetic(rng, arithmetic)
        rng.shuffle(prompts)
        return prompts

    return build(train_topics, train_tasks, 600, 300), build(held_topics, held_tasks, 30, 20)
