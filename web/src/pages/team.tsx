export default function Page() { return <p>team</p>; }
